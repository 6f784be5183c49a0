import Dispatch
import Postgres
import Synchronization
import Testing
import TestSupport

/// Nesting: work inside `withConnection` / `withTransaction` that asks the same pool again
/// gets the connection its thread already holds. On a pool of one, anything else would
/// wait for itself; the short checkout timeout turns such a bug into a failure, not a hang.
@Suite struct LentConnectionTests {
    private func makePoolOfOne() throws -> ConnectionPool {
        try PoolFixtures.makePool(size: 1) { $0.checkoutTimeout = .milliseconds(500) }
    }

    @Test func withConnectionInsideTransaction_usesTheSameConnectionAndSeesUncommittedRows() throws {
        let pool = try makePoolOfOne()
        try pool.withTransaction { outer in
            try outer.query("INSERT INTO users (email) VALUES ('a@x')")
            let outerPID = try PoolFixtures.backendPID(outer)
            let (innerPID, count) = try pool.withConnection { inner in
                (try PoolFixtures.backendPID(inner), try PoolFixtures.userCount(inner))
            }
            #expect(innerPID == outerPID)
            #expect(count == 1)
        }
        #expect(try PoolFixtures.userCount(pool) == 1)
        #expect(pool.statistics == ConnectionPool.Statistics(inUse: 0, idle: 1, waiting: 0))
    }

    @Test func nestedTransaction_joinsTheOuterOne() throws {
        struct Abort: Error {}
        let pool = try makePoolOfOne()
        #expect(throws: Abort.self) {
            try pool.withTransaction { outer in
                try outer.query("INSERT INTO users (email) VALUES ('a@x')")
                try pool.withTransaction(isolation: .serializable) { inner in
                    try inner.query("INSERT INTO users (email) VALUES ('b@x')")
                }
                // The inner one committed nothing of its own: the outer rollback takes both.
                throw Abort()
            }
        }
        #expect(try PoolFixtures.userCount(pool) == 0)

        try pool.withTransaction { _ in
            try pool.withTransaction { try $0.query("INSERT INTO users (email) VALUES ('c@x')") }
        }
        #expect(try PoolFixtures.userCount(pool) == 1)
    }

    @Test func transactionInsideWithConnection_isARealTransaction() throws {
        struct Abort: Error {}
        let pool = try makePoolOfOne()
        try pool.withConnection { _ in
            #expect(throws: Abort.self) {
                try pool.withTransaction { connection in
                    try connection.query("INSERT INTO users (email) VALUES ('a@x')")
                    throw Abort()
                }
            }
        }
        #expect(try PoolFixtures.userCount(pool) == 0)
    }

    /// The slot is per thread: another thread inside the same pool still checks out its
    /// own connection (and here waits for it, the pool being full).
    @Test func otherThreads_doNotShareTheLentConnection() throws {
        let pool = try makePoolOfOne()
        let outcome = Mutex<PostgresError.Kind?>(nil)
        try pool.withConnection { _ in
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                do {
                    try pool.withConnection { _ in }
                } catch let error as PostgresError {
                    outcome.withLock { $0 = error.kind }
                } catch {}
                done.signal()
            }
            try #require(done.wait(timeout: .now() + 10) == .success)
        }
        #expect(outcome.withLock { $0 } == .poolTimeout)
    }
}
