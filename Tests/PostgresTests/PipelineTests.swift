import Postgres
import Testing
import TestSupport

/// The BEGIN, Prepare and Execute that travel together (PostgresConnection+Pipeline): an
/// error at any step is reported as itself, and the connection comes back usable.
@Suite struct PipelineTests {
    @Test func errorInTheFirstStatement_rollsBackAndTheConnectionIsReused() throws {
        let pool = try PoolFixtures.makePool(size: 1)
        let pid = try pool.withConnection { connection in
            try connection.query("INSERT INTO users (email) VALUES ('a@x')")
            return try PoolFixtures.backendPID(connection)
        }
        let error = #expect(throws: PostgresError.self) {
            try pool.withTransaction { try $0.query("INSERT INTO users (email) VALUES ('a@x')") }
        }
        #expect(error?.kind == .server)
        #expect(error?.sqlState == .uniqueViolation)
        #expect(!pool.isDatabaseDown)
        try pool.withTransaction { connection in
            #expect(try PoolFixtures.backendPID(connection) == pid)
            try connection.query("INSERT INTO users (email) VALUES ('b@x')")
        }
        #expect(try PoolFixtures.userCount(pool) == 2)
    }

    @Test(arguments: [false, true])
    func syntaxErrorInANewStatement_isAServerError(afterAnotherStatement: Bool) throws {
        let pool = try PoolFixtures.makePool(size: 1)
        let error = #expect(throws: PostgresError.self) {
            try pool.withTransaction { connection in
                if afterAnotherStatement { try connection.query("INSERT INTO users (email) VALUES ('a@x')") }
                try connection.query("SELEC 1")
            }
        }
        #expect(error?.kind == .server)
        #expect(error?.sqlState == .syntaxError)
        #expect(!pool.isDatabaseDown)
        #expect(try PoolFixtures.userCount(pool) == 0)
        #expect(pool.statistics == ConnectionPool.Statistics(inUse: 0, idle: 1, waiting: 0))
    }

    @Test func theTransactionSpansEveryStatement() throws {
        let pool = try PoolFixtures.makePool()
        let ids: [Int64] = try pool.withTransaction { connection in
            let first: Int64 = try connection.query("SELECT txid_current() AS id").first!.decode("id")
            let second: Int64 = try connection.query("SELECT txid_current() + 0 AS id").first!.decode("id")
            return [first, second]
        }
        #expect(ids[0] == ids[1])
    }

    @Test func textStatementFirst_beginsTheTransactionToo() throws {
        struct Abort: Error {}
        let pool = try PoolFixtures.makePool()
        #expect(throws: Abort.self) {
            try pool.withTransaction { connection in
                try connection.execute(unsafeSQL: "INSERT INTO users (email) VALUES ('a@x'); INSERT INTO users (email) VALUES ('b@x')")
                try connection.query("INSERT INTO users (email) VALUES ('c@x')")
                throw Abort()
            }
        }
        #expect(try PoolFixtures.userCount(pool) == 0)
    }

    @Test func emptyTransaction_returnsItsValue() throws {
        let pool = try PoolFixtures.makePool(size: 1)
        #expect(try pool.withTransaction { _ in "nothing ran" } == "nothing ran")
        #expect(try pool.withConnection { $0.isUsable })
    }
}
