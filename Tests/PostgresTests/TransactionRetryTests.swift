#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Postgres
import Synchronization
import Testing
import TestSupport

/// A transaction that is run again after a conflict gives its connection back for the
/// pause: with every connection busy in retries, nobody else would get one.
@Suite struct TransactionRetryTests {
    /// A pool of one: while the first attempt fails, another caller is already waiting for
    /// the connection. It must get it before the second attempt runs, not after the whole
    /// transaction (or retried statement).
    @Test(arguments: [false, true])
    func backOff_givesTheConnectionToTheNextCaller(singleStatement: Bool) throws {
        let pool = try PoolFixtures.makePool(size: 1)
        let attempts = Atomic<Int>(0)
        let otherRanDuringAttempt = Atomic<Int>(-1)
        let otherDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            // Waits in the pool until the first attempt gives the connection back.
            while attempts.load(ordering: .acquiring) == 0 { usleep(100) }
            _ = try? pool.withConnection { _ in
                otherRanDuringAttempt.store(attempts.load(ordering: .acquiring), ordering: .releasing)
            }
            otherDone.signal()
        }
        let body = { (connection: PostgresConnection) throws in
            let attempt = attempts.add(1, ordering: .acquiringAndReleasing).newValue
            guard attempt == 1 else { return }
            // The other caller is queued on the pool (it counts as waiting) before this fails.
            let deadline = ContinuousClock.now + .seconds(5)
            while pool.statistics.waiting == 0 && ContinuousClock.now < deadline { usleep(100) }
            try connection.execute(unsafeSQL: "DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = 'serialization_failure'; END $$")
        }
        if singleStatement { try pool.withRetriedStatement(body) } else { try pool.withTransaction(body) }
        #expect(otherDone.wait(timeout: .now() + 10) == .success)
        #expect(attempts.load(ordering: .relaxed) == 2)
        #expect(otherRanDuringAttempt.load(ordering: .relaxed) == 1, "the other caller ran only after the retry")
    }

    /// Nested in a `withConnection`, the outer call holds the connection: the transaction
    /// retries on it (checking out another would deadlock a pool of one).
    @Test func insideWithConnection_retriesOnTheSameConnection() throws {
        let pool = try PoolFixtures.makePool(size: 1)
        var pids: [Int32] = []
        try pool.withConnection { _ in
            try pool.withTransaction { connection in
                pids.append(try PoolFixtures.backendPID(connection))
                if pids.count == 1 {
                    try connection.execute(unsafeSQL: "DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = 'serialization_failure'; END $$")
                }
            }
        }
        #expect(pids.count == 2)
        #expect(Set(pids).count == 1)
    }
}
