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
    /// the connection. It must get it between two attempts, not after the whole transaction
    /// (or retried statement). The attempts fail until it has run, so that a loaded machine
    /// that wakes it late still gets it in one of the pauses (they grow to 100 ms).
    @Test(arguments: [false, true])
    func backOff_givesTheConnectionToTheNextCaller(singleStatement: Bool) throws {
        let pool = try PoolFixtures.makePool(size: 1)
        let attempts = Atomic<Int>(0)
        let otherRanAfterAttempt = Atomic<Int>(0)
        let otherDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            // Waits in the pool until an attempt gives the connection back.
            _ = eventually { attempts.load(ordering: .acquiring) > 0 }
            _ = try? pool.withConnection { _ in
                otherRanAfterAttempt.store(attempts.load(ordering: .acquiring), ordering: .releasing)
            }
            otherDone.signal()
        }
        let body = { (connection: PostgresConnection) throws in
            let attempt = attempts.add(1, ordering: .acquiringAndReleasing).newValue
            // Done once the other caller has had the connection; the last attempt always is.
            guard otherRanAfterAttempt.load(ordering: .acquiring) == 0 && attempt < ConnectionPool.transactionAttempts else {
                return
            }
            if attempt == 1 {
                // The other caller is queued on the pool (it counts as waiting) before this fails.
                // Generous: the whole test run shares two cores.
                _ = eventually { pool.statistics.waiting > 0 }
            }
            try connection.execute(unsafeSQL: "DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = 'serialization_failure'; END $$")
        }
        if singleStatement { try pool.withRetriedStatement(body) } else { try pool.withTransaction(body) }
        #expect(otherDone.wait(timeout: .now() + 10) == .success)
        let ran = otherRanAfterAttempt.load(ordering: .relaxed)
        #expect(ran > 0 && ran < attempts.load(ordering: .relaxed), "the other caller ran only after the last attempt")
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
