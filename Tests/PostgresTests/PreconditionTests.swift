import Postgres
import Testing
import TestSupport

/// `Precondition`: a statement that goes ahead of the thread's first statement, in its
/// pipeline; when it fails, that statement is skipped, whatever way it was sent.
@Suite struct PreconditionTests {
    /// Raises (division by zero) when a user with this email exists.
    private static func noUser(_ email: String) -> SQLQuery {
        "1 / ((SELECT count(*)::int FROM users WHERE email = \(email)) - 1) <> 0"
    }

    private static let divisionByZero = SQLState(rawValue: "22012")

    @Test func aPreconditionThatHolds_letsTheStatementRun_andIsSentOnce() throws {
        let pool = try PoolFixtures.makePool()
        let (result, precondition) = Precondition.checking(Self.noUser("a@x"), refutation: Self.divisionByZero) {
            try pool.withConnection { connection in
                try connection.query("INSERT INTO users (email) VALUES ('a@x')")
                // Only the first statement carries it: this one runs alone (the check would fail now).
                try connection.query("INSERT INTO users (email) VALUES ('b@x')")
            }
        }
        #expect(throws: Never.self) { try result.get() }
        guard case .held = precondition.outcome else { Issue.record("\(precondition.outcome)"); return }
        #expect(try PoolFixtures.userCount(pool) == 2)
    }

    @Test func aPreconditionThatFails_skipsTheStatement_andItsErrorIsThrown() throws {
        let pool = try PoolFixtures.makePool()
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        let (result, precondition) = Precondition.checking(Self.noUser("a@x"), refutation: Self.divisionByZero) {
            try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('c@x')") }
        }
        #expect(throws: PostgresError.self) { try result.get() }
        guard case .failed(let error) = precondition.outcome else { Issue.record("\(precondition.outcome)"); return }
        #expect(error.sqlState?.rawValue == "22012")
        #expect(try PoolFixtures.userCount(pool) == 1)
        // The connection is fine afterwards.
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('d@x')") }
        #expect(try PoolFixtures.userCount(pool) == 2)
    }

    @Test func inATransaction_aFailedPreconditionRollsItBack() throws {
        let pool = try PoolFixtures.makePool()
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        let (result, precondition) = Precondition.checking(Self.noUser("a@x"), refutation: Self.divisionByZero) {
            try pool.withTransaction { connection in
                try connection.query("INSERT INTO users (email) VALUES ('c@x')")
                try connection.query("INSERT INTO users (email) VALUES ('e@x')")
            }
        }
        #expect(throws: PostgresError.self) { try result.get() }
        guard case .failed = precondition.outcome else { Issue.record("\(precondition.outcome)"); return }
        #expect(try PoolFixtures.userCount(pool) == 1)
    }

    @Test func aSimpleQuery_checksItFirst_andAScopeThatSentNothingLeavesItPending() throws {
        let pool = try PoolFixtures.makePool()
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        let (result, precondition) = Precondition.checking(Self.noUser("a@x"), refutation: Self.divisionByZero) {
            try pool.withConnection { try $0.execute(unsafeSQL: "INSERT INTO users (email) VALUES ('c@x')") }
        }
        #expect(throws: PostgresError.self) { try result.get() }
        guard case .failed = precondition.outcome else { Issue.record("\(precondition.outcome)"); return }
        #expect(try PoolFixtures.userCount(pool) == 1)

        let (_, untouched) = Precondition.checking(Self.noUser("a@x"), refutation: Self.divisionByZero) { 42 }
        guard case .pending = untouched.outcome else { Issue.record("\(untouched.outcome)"); return }
    }

    @Test func aSelect_carriesItAsAFilter_withItsColumnsAndOrderUnchanged() throws {
        let pool = try PoolFixtures.makePool()
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('b@x'), ('c@x'), ('d@x')") }
        let read: SQLQuery = "SELECT email, id, email AS again FROM users ORDER BY email DESC LIMIT \(2)"
        let (result, precondition) = Precondition.checking(Self.noUser("a@x"), refutation: Self.divisionByZero) {
            try pool.withConnection { connection in
                try connection.query(read).rows.map { try [$0.decode("email", as: String.self), $0.decode(at: 2, as: String.self)] }
            }
        }
        #expect(try result.get() == [["d@x", "d@x"], ["c@x", "c@x"]])
        guard case .held = precondition.outcome else { Issue.record("\(precondition.outcome)"); return }

        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        let (refused, refutation) = Precondition.checking(Self.noUser("a@x"), refutation: Self.divisionByZero) {
            try pool.withConnection { try $0.query(read).rows.count }
        }
        #expect(throws: PostgresError.self) { try refused.get() }
        guard case .failed = refutation.outcome else { Issue.record("\(refutation.outcome)"); return }
        // A select that fails for a reason of its own leaves the condition for the next statement.
        let (_, unchecked) = Precondition.checking(Self.noUser("z@x"), refutation: Self.divisionByZero) {
            try pool.withConnection { try $0.query("SELECT no_such_column FROM users") }
        }
        guard case .pending = unchecked.outcome else { Issue.record("\(unchecked.outcome)"); return }
    }
}
