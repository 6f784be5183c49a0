@testable import Postgres
import Testing
import TestSupport

/// `Precondition`: one unit of work's condition, in the `DatabaseSession` it hands the pool
/// (`ConnectionPool.serving(_:)`). It goes to the primary as a statement of its own, ahead
/// of the work's first statement there in the same pipeline and Sync segment: when it
/// fails, that statement is skipped, however it was sent, and its text is never touched.
/// A read served by a replica has it checked on the primary meanwhile; no other work sees it.
@Suite struct PreconditionTests {
    /// Raises (division by zero) when a user with this email exists.
    private static func noUser(_ email: String) -> SQLQuery {
        "1 / ((SELECT count(*)::int FROM users WHERE email = \(email)) - 1) <> 0"
    }

    private static let divisionByZero = SQLState(rawValue: "22012")

    /// `pool` serving work whose precondition is that no user has `email`.
    private static func work(on pool: ConnectionPool, unless email: String) -> (ConnectionPool, Precondition) {
        let precondition = Precondition(noUser(email), refutation: divisionByZero)
        return (pool.serving(DatabaseSession(precondition: precondition)), precondition)
    }

    @Test func aPreconditionThatHolds_letsTheStatementRun_andIsSentOnce() throws {
        let pool = try PoolFixtures.makePool()
        let (work, precondition) = Self.work(on: pool, unless: "a@x")
        try work.withConnection { connection in
            try connection.query("INSERT INTO users (email) VALUES ('a@x')")
            // Only the first statement carries it: this one runs alone (the check would fail now).
            try connection.query("INSERT INTO users (email) VALUES ('b@x')")
        }
        guard case .held = precondition.outcome else { Issue.record("\(precondition.outcome)"); return }
        // Checked once for the whole work, whatever connection it uses next.
        try work.withConnection { try $0.query("INSERT INTO users (email) VALUES ('c@x')") }
        #expect(try PoolFixtures.userCount(pool) == 3)
    }

    /// One statement for several units of work (a batch of requests' writes): each one's
    /// precondition goes ahead of it in its Sync segment. The first that raises skips the
    /// statement and the checks behind it, which stay pending; without it, the rest run.
    @Test func severalPreconditions_onOneStatement_theFirstRefutedSkipsIt_andTheRestStayPending() throws {
        let pool = try PoolFixtures.makePool()
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('taken@x')") }
        let holds = Precondition(Self.noUser("a@x"), refutation: Self.divisionByZero)
        let refuted = Precondition(Self.noUser("taken@x"), refutation: Self.divisionByZero)
        let behind = Precondition(Self.noUser("b@x"), refutation: Self.divisionByZero)
        try pool.withConnection { connection in
            #expect(throws: PostgresError.self) {
                try connection.query("INSERT INTO users (email) VALUES ('c@x')", checking: [holds, refuted, behind])
            }
        }
        #expect(refuted.refutationError != nil && behind.isPending)
        #expect(try PoolFixtures.userCount(pool) == 1)
        try pool.withConnection { connection in
            try connection.query("INSERT INTO users (email) VALUES ('c@x')", checking: [holds, behind])
        }
        guard case .held = behind.outcome else { Issue.record("\(behind.outcome)"); return }
        #expect(try PoolFixtures.userCount(pool) == 2)
    }

    @Test func aPreconditionThatFails_skipsTheStatement_andItsErrorIsThrown() throws {
        let pool = try PoolFixtures.makePool()
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        let (work, precondition) = Self.work(on: pool, unless: "a@x")
        #expect(throws: PostgresError.self) {
            try work.withConnection { try $0.query("INSERT INTO users (email) VALUES ('c@x')") }
        }
        #expect(precondition.refutationError != nil)
        #expect(try PoolFixtures.userCount(pool) == 1)
        // The connection is fine afterwards.
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('d@x')") }
        #expect(try PoolFixtures.userCount(pool) == 2)
    }

    @Test func onceRefuted_nothingMoreOfTheWorkIsSent_andACheckThatFailedOtherwiseStaysPending() throws {
        let pool = try PoolFixtures.makePool()
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        let (work, precondition) = Self.work(on: pool, unless: "a@x")
        // Work that catches the refutation and goes on: its next statements are refused too.
        try work.withConnection { connection in
            #expect(throws: PostgresError.self) { try connection.query("INSERT INTO users (email) VALUES ('b@x')") }
            #expect(throws: PostgresError.self) { try connection.query("INSERT INTO users (email) VALUES ('c@x')") }
        }
        #expect(throws: PostgresError.self) { try work.withTransaction { try $0.query("INSERT INTO users (email) VALUES ('d@x')") } }
        #expect(throws: PostgresError.self) { try work.withReadConnection { try PoolFixtures.userCount($0) } }
        #expect(precondition.refutationError?.sqlState == Self.divisionByZero)
        #expect(try PoolFixtures.userCount(pool) == 1)

        // A check cut short by the statement timeout said nothing: unchecked still.
        let slow = try PoolFixtures.makePool { $0.statementTimeout = .milliseconds(100) }
        let waiting = Precondition("(SELECT pg_sleep(1)) IS NOT NULL", refutation: Self.divisionByZero)
        #expect(throws: PostgresError.self) {
            try slow.serving(DatabaseSession(precondition: waiting)).withConnection { try $0.query("SELECT 1 AS one") }
        }
        guard case .pending = waiting.outcome else { Issue.record("\(waiting.outcome)"); return }
    }

    /// Preconditions made from one `Statement` (one remembered caller's requests): a check
    /// that held proves those made before it was sent, which then send none of their own;
    /// one made after it sends its own, and sees what changed meanwhile.
    @Test func aCheckThatHeld_provesTheSameStatementsPreconditionsMadeBeforeItWasSent() throws {
        let pool = try PoolFixtures.makePool()
        let statement = Precondition.Statement(Self.noUser("a@x"))
        let earlier = Precondition(statement, refutation: Self.divisionByZero)
        let checked = Precondition(statement, refutation: Self.divisionByZero)
        try pool.serving(DatabaseSession(precondition: checked)).withConnection { try $0.query("SELECT 1 AS one") }
        guard case .held = checked.outcome else { Issue.record("\(checked.outcome)"); return }
        // The condition no longer holds from here on.
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        // Made before the check that held was sent: proven by it, nothing sent for it.
        try pool.serving(DatabaseSession(precondition: earlier)).withConnection { try $0.query("INSERT INTO users (email) VALUES ('b@x')") }
        guard case .held = earlier.outcome else { Issue.record("\(earlier.outcome)"); return }
        // Made after: its own check, which sees the change.
        let later = Precondition(statement, refutation: Self.divisionByZero)
        #expect(throws: PostgresError.self) {
            try pool.serving(DatabaseSession(precondition: later)).withConnection { try $0.query("INSERT INTO users (email) VALUES ('c@x')") }
        }
        #expect(later.refutationError != nil)
        // Another statement of the same condition shares nothing with these.
        let other = Precondition(Precondition.Statement(Self.noUser("a@x")), refutation: Self.divisionByZero)
        #expect(throws: PostgresError.self) {
            try pool.serving(DatabaseSession(precondition: other)).withConnection { try $0.query("INSERT INTO users (email) VALUES ('d@x')") }
        }
        #expect(try PoolFixtures.userCount(pool) == 2)
    }

    @Test func inATransaction_aFailedPreconditionRollsItBack() throws {
        let pool = try PoolFixtures.makePool()
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        let (work, precondition) = Self.work(on: pool, unless: "a@x")
        #expect(throws: PostgresError.self) {
            try work.withTransaction { connection in
                try connection.query("INSERT INTO users (email) VALUES ('c@x')")
                try connection.query("INSERT INTO users (email) VALUES ('e@x')")
            }
        }
        #expect(precondition.refutationError != nil)
        #expect(try PoolFixtures.userCount(pool) == 1)
    }

    @Test func aSimpleQuery_checksItFirst_andWorkThatSentNothingLeavesItPending() throws {
        let pool = try PoolFixtures.makePool()
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        let (work, precondition) = Self.work(on: pool, unless: "a@x")
        #expect(throws: PostgresError.self) {
            try work.withConnection { try $0.execute(unsafeSQL: "INSERT INTO users (email) VALUES ('c@x')") }
        }
        #expect(precondition.refutationError != nil)
        #expect(try PoolFixtures.userCount(pool) == 1)

        let (_, untouched) = Self.work(on: pool, unless: "a@x")
        guard case .pending = untouched.outcome else { Issue.record("\(untouched.outcome)"); return }
    }

    @Test func onlyTheWorkGivenTheSession_carriesIt() throws {
        let pool = try PoolFixtures.makePool(size: 1)
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        let (work, precondition) = Self.work(on: pool, unless: "a@x")
        // The pool as made, on the same thread (and the same connection): nothing carried.
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('b@x')") }
        guard case .pending = precondition.outcome else { Issue.record("\(precondition.outcome)"); return }
        // Work that holds a connection of the plain pool and then uses the session's copy
        // (one loan, as nested calls share it): the copy's first statement carries it.
        #expect(throws: PostgresError.self) {
            try pool.withConnection { _ in
                try work.withConnection { try $0.query("INSERT INTO users (email) VALUES ('c@x')") }
            }
        }
        #expect(precondition.refutationError != nil)
        #expect(try PoolFixtures.userCount(pool) == 2)
    }

    @Test func aSelect_goesAsWritten_andThePreconditionAsAStatementOfItsOwn() throws {
        let pool = try PoolFixtures.makePool(size: 1)
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('b@x'), ('c@x'), ('d@x')") }
        let read: SQLQuery = "SELECT email, id, email AS again FROM users ORDER BY email DESC LIMIT \(2)"
        let (work, precondition) = Self.work(on: pool, unless: "a@x")
        let rows = try work.withConnection { connection in
            try connection.query(read).rows.map { try [$0.decode("email", as: String.self), $0.decode(at: 2, as: String.self)] }
        }
        #expect(rows == [["d@x", "d@x"], ["c@x", "c@x"]])
        guard case .held = precondition.outcome else { Issue.record("\(precondition.outcome)"); return }
        // What the server prepared: the read as written, and the condition's own statement.
        let prepared: [String] = try pool.withConnection { connection in
            try connection.query("SELECT statement FROM pg_prepared_statements ORDER BY prepare_time").rows
                .map { try $0.decode("statement") }
        }
        #expect(prepared.contains(read.sql))
        #expect(prepared.contains(precondition.statement.sql))
        #expect(!prepared.contains { $0.contains("checked") })

        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        let (refusedWork, refuted) = Self.work(on: pool, unless: "a@x")
        #expect(throws: PostgresError.self) { try refusedWork.withConnection { try $0.query(read).rows.count } }
        #expect(refuted.refutationError != nil)
        // A select that fails for a reason of its own: the condition, ahead of it, was checked.
        let (failingWork, checked) = Self.work(on: pool, unless: "z@x")
        #expect(throws: PostgresError.self) { try failingWork.withConnection { try $0.query("SELECT no_such_column FROM users") } }
        guard case .held = checked.outcome else { Issue.record("\(checked.outcome)"); return }
    }

    /// A pool whose one "replica" is another database that takes reads at once: it has no
    /// users, so a precondition judged there would hold where the primary refutes it.
    private static func poolWithReplica() throws -> ConnectionPool {
        let primary = ConnectionPool.Configuration(conninfo: try TestDatabase.makeDatabase(), size: 2)
        let replicas = ReplicaSet(conninfos: [try TestDatabase.makeDatabase()], configuration: primary, maxLag: .seconds(60))
        replicas.replicas[0].record(.ok, lag: .zero, replayed: LogSequenceNumber(value: .max))
        return ConnectionPool(primary, replicas: replicas)
    }

    @Test func aReadOnAReplica_countsOnlyOnceThePrimaryHeldThePrecondition() throws {
        let pool = try Self.poolWithReplica()
        defer { pool.close(); pool.replicas?.close() }
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        let replica = try #require(pool.replicas?.replicas.first)

        let (work, precondition) = Self.work(on: pool, unless: "z@x")
        // Served by the replica (no users there), checked on the primary.
        #expect(try work.withReadConnection { try PoolFixtures.userCount($0) } == 0)
        guard case .held = precondition.outcome else { Issue.record("\(precondition.outcome)"); return }
        #expect(replica.reads.load(ordering: .relaxed) == 1)

        // The replica would hold it; the primary refutes it: the read is not answered.
        let (refusedWork, refuted) = Self.work(on: pool, unless: "a@x")
        #expect(throws: PostgresError.self) { try refusedWork.withReadConnection { try PoolFixtures.userCount($0) } }
        #expect(refuted.refutationError != nil)
        // Both connections are fine afterwards.
        #expect(try pool.withReadConnection { try PoolFixtures.userCount($0) } == 0)
        #expect(try pool.withConnection { try PoolFixtures.userCount($0) } == 1)
        #expect(pool.statistics.inUse == 0)
    }

    @Test func aReadTheReplicaFails_runsOnThePrimary_afterThePrecondition() throws {
        let pool = try Self.poolWithReplica()
        defer { pool.close(); pool.replicas?.close() }
        try pool.withConnection { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        // The replica cancels the read as for a conflict with recovery: it runs again on the
        // primary connection that checked the precondition.
        let (work, precondition) = Self.work(on: pool, unless: "z@x")
        let count = try work.withReadConnection { connection -> Int in
            if try PoolFixtures.userCount(connection) == 0 {
                throw PostgresError(.server, sqlState: .serializationFailure, details: "canceled on the replica")
            }
            return try PoolFixtures.userCount(connection)
        }
        #expect(count == 1)
        guard case .held = precondition.outcome else { Issue.record("\(precondition.outcome)"); return }

        let (refusedWork, refuted) = Self.work(on: pool, unless: "a@x")
        #expect(throws: PostgresError.self) {
            try refusedWork.withReadConnection { connection -> Int in
                if try PoolFixtures.userCount(connection) == 0 {
                    throw PostgresError(.server, sqlState: .serializationFailure, details: "canceled on the replica")
                }
                Issue.record("the read ran on the primary though the precondition failed")
                return 1
            }
        }
        #expect(refuted.refutationError != nil)
        #expect(pool.statistics.inUse == 0)
    }
}
