import Dispatch
import Postgres
import Synchronization
import Testing
import TestSupport

@Suite struct TransactionTests {
    @Test func commitsOnReturn() throws {
        let pool = try PoolFixtures.makePool()
        let value = try pool.withTransaction { connection in
            try connection.query("INSERT INTO users (email) VALUES ('a@x')")
            return 42
        }
        #expect(value == 42)
        #expect(try PoolFixtures.userCount(pool) == 1)
    }

    @Test func rollsBackOnThrow() throws {
        struct Abort: Error {}
        let pool = try PoolFixtures.makePool()
        #expect(throws: Abort.self) {
            try pool.withTransaction { connection in
                try connection.query("INSERT INTO users (email) VALUES ('a@x')")
                throw Abort()
            }
        }
        #expect(try PoolFixtures.userCount(pool) == 0)
        #expect(throws: PostgresError.self) {
            try pool.withTransaction { connection in
                try connection.query("INSERT INTO users (email) VALUES ('b@x')")
                try connection.query("INSERT INTO users (email) VALUES ('b@x')")
            }
        }
        #expect(try PoolFixtures.userCount(pool) == 0)
    }

    /// PostgreSQL answers COMMIT in a failed transaction with ROLLBACK, not an error: a body
    /// that swallowed the failure must not be told its work was committed.
    @Test func bodyThatCaughtAFailure_isNotReportedCommitted() throws {
        let pool = try PoolFixtures.makePool()
        let error = #expect(throws: PostgresError.self) {
            try pool.withTransaction { connection in
                try connection.query("INSERT INTO users (email) VALUES ('a@x')")
                _ = try? connection.query("INSERT INTO users (email) VALUES ('a@x')")
            }
        }
        #expect(error?.sqlState == .uniqueViolation)
        #expect(try PoolFixtures.userCount(pool) == 0)
    }

    @Test func isolationLevel_isTheOneAskedFor() throws {
        let pool = try PoolFixtures.makePool()
        let expected: [IsolationLevel: String] = [.readCommitted: "read committed", .repeatableRead: "repeatable read",
                                                  .serializable: "serializable"]
        for (isolation, name) in expected {
            let level: String = try pool.withTransaction(isolation: isolation) { connection in
                try connection.query("SELECT current_setting('transaction_isolation') AS level").first!.decode("level")
            }
            #expect(level == name)
        }
    }

    /// The brief's orchestration, on one thread: attempt 1 reads a row, another connection
    /// then updates and commits it, and attempt 1's own update fails with 40001.
    @Test func serializationFailure_isRetriedToSuccess() throws {
        let pool = try PoolFixtures.makePool()
        try PoolFixtures.makeCounters(pool)
        let other = try PostgresConnection(conninfo: pool.configuration.conninfo)
        var attempts = 0
        try pool.withTransaction(isolation: .repeatableRead) { connection in
            attempts += 1
            let seen = try PoolFixtures.counter(1, on: connection)
            if attempts == 1 { try other.query("UPDATE counters SET n = n + 10 WHERE id = 1") }
            try connection.query("UPDATE counters SET n = \(seen + 1) WHERE id = 1")
        }
        #expect(attempts == 2)
        #expect(try PoolFixtures.counter(1, on: other) == 11)
    }

    /// A conflict PostgreSQL reports only at COMMIT (as serializable transactions may): a
    /// deferred trigger raises 40001 the first time, counted by a sequence, which a
    /// rollback does not undo.
    @Test func conflictAtCommit_isRetriedToo() throws {
        let pool = try PoolFixtures.makePool()
        try pool.withConnection { connection in
            try connection.execute(unsafeSQL: """
                CREATE SEQUENCE commits_seen;
                CREATE FUNCTION fail_first_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF nextval('commits_seen') = 1 THEN
                        RAISE EXCEPTION 'simulated conflict' USING ERRCODE = 'serialization_failure';
                    END IF;
                    RETURN NULL;
                END $$;
                CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON users
                    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fail_first_commit();
                """)
        }
        var attempts = 0
        try pool.withTransaction(isolation: .serializable) { connection in
            attempts += 1
            try connection.query("INSERT INTO users (email) VALUES ('a@x')")
        }
        #expect(attempts == 2)
        #expect(try PoolFixtures.userCount(pool) == 1)
    }

    @Test func persistentConflict_givesUpAfterTheLastAttempt() throws {
        let pool = try PoolFixtures.makePool()
        var attempts = 0
        let error = #expect(throws: PostgresError.self) {
            try pool.withTransaction { connection in
                attempts += 1
                try connection.execute(unsafeSQL: "DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = 'deadlock_detected'; END $$")
            }
        }
        #expect(error?.sqlState == .deadlockDetected)
        #expect(attempts == ConnectionPool.transactionAttempts)
        #expect(!pool.isDatabaseDown)
    }

    /// Two transactions lock the same two rows in opposite orders; PostgreSQL aborts one
    /// (40P01), which runs again once the other has committed. Both end up applied.
    @Test func deadlock_bothTransactionsSucceed() throws {
        let pool = try PoolFixtures.makePool()
        try PoolFixtures.makeCounters(pool)
        let firstHolds = DispatchSemaphore(value: 0)
        let secondHolds = DispatchSemaphore(value: 0)
        let attempts = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        let done = DispatchGroup()
        for (mine, theirs, holding, waitFor) in [(Int32(1), Int32(2), firstHolds, secondHolds),
                                                 (Int32(2), Int32(1), secondHolds, firstHolds)] {
            DispatchQueue.global().async(group: done) {
                do {
                    var attempt = 0
                    try pool.withTransaction { connection in
                        attempt += 1
                        attempts.add(1, ordering: .relaxed)
                        try connection.query("UPDATE counters SET n = n + 1 WHERE id = \(mine)")
                        if attempt == 1 {
                            holding.signal()
                            guard waitFor.wait(timeout: .now() + 10) == .success else { throw PostgresError(.server, details: "peer never came") }
                        }
                        try connection.query("UPDATE counters SET n = n + 1 WHERE id = \(theirs)")
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        try #require(done.wait(timeout: .now() + 30) == .success)
        #expect(failures.withLock { $0 } == [])
        // One of the two ran again at least once; on a loaded machine a retry can meet the
        // other transaction once more, so only the lower bound is exact.
        #expect(attempts.load(ordering: .relaxed) >= 3)
        let totals = try pool.withConnection { connection in
            try [PoolFixtures.counter(1, on: connection), PoolFixtures.counter(2, on: connection)]
        }
        #expect(totals == [2, 2])
    }
}
