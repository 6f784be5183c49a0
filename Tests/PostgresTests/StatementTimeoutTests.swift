import Postgres
import Testing
import TestSupport

/// A slow statement costs its own request a 503, never the database: the server cancels
/// it (statement_timeout) and the connection carries on. Only a server that does not
/// answer at all (the client-side queryTimeout) costs the connection.
@Suite struct StatementTimeoutTests {
    private func makePool(size: Int = 1) throws -> ConnectionPool {
        try PoolFixtures.makePool(size: size) { $0.statementTimeout = .milliseconds(300) }
    }

    @Test func slowStatement_isCancelledByTheServer_andThePoolStaysUp() throws {
        let pool = try makePool()
        let pid = try pool.withConnection { try PoolFixtures.backendPID($0) }
        let started = ContinuousClock.now
        let error = #expect(throws: PostgresError.self) {
            try pool.withConnection { try $0.query("SELECT pg_sleep(2)") }
        }
        #expect(ContinuousClock.now - started < .milliseconds(1500))
        #expect(error?.kind == .server)
        #expect(error?.sqlState == .queryCanceled)
        #expect(error?.isUnavailable == true)
        #expect(!pool.isDatabaseDown)

        let next = ContinuousClock.now
        #expect(try pool.withConnection { try PoolFixtures.backendPID($0) } == pid)
        #expect(ContinuousClock.now - next < .milliseconds(200))
    }

    @Test func slowStatementInATransaction_rollsBackAndKeepsTheConnection() throws {
        let pool = try makePool()
        let pid = try pool.withConnection { try PoolFixtures.backendPID($0) }
        let error = #expect(throws: PostgresError.self) {
            try pool.withTransaction { connection in
                try connection.query("INSERT INTO users (email) VALUES ('a@x')")
                try connection.query("SELECT pg_sleep(2)")
            }
        }
        #expect(error?.sqlState == .queryCanceled)
        #expect(!pool.isDatabaseDown)
        #expect(try PoolFixtures.userCount(pool) == 0)
        #expect(try pool.withConnection { try PoolFixtures.backendPID($0) } == pid)
    }

    @Test func silentServer_stillHitsTheClientDeadline_andCountsAsLost() throws {
        let pool = try PoolFixtures.makePool(size: 1) { configuration in
            configuration.statementTimeout = .zero
            configuration.queryTimeout = .milliseconds(300)
        }
        let error = #expect(throws: PostgresError.self) {
            try pool.withConnection { try $0.query("SELECT pg_sleep(2)") }
        }
        #expect(error?.kind == .connectionLost)
        #expect(pool.isDatabaseDown)
        // The next request probes, gets through, and ends the outage.
        #expect(try pool.withConnection { try $0.query("SELECT 1 AS one").first!.decode("one", as: Int.self) } == 1)
        #expect(!pool.isDatabaseDown)
    }

    /// A write whose answer the client gave up on does not land later: the server is asked
    /// to stop it (without that, the sleep ends and the insert commits after the 503).
    @Test func aStatementGivenUpOnByTheClient_isStoppedOnTheServer() throws {
        let pool = try PoolFixtures.makePool(size: 1) { configuration in
            configuration.statementTimeout = .zero
            configuration.queryTimeout = .milliseconds(300)
        }
        try pool.withConnection { try $0.execute(unsafeSQL: "CREATE TABLE late (n int)") }
        let error = #expect(throws: PostgresError.self) {
            try pool.withConnection { try $0.query("INSERT INTO late SELECT 1 FROM pg_sleep(1.5)") }
        }
        #expect(error?.kind == .connectionLost)
        // Once no statement of the abandoned session runs, no row came of it.
        #expect(try eventually(timeout: .seconds(10)) {
            try pool.withConnection { connection in
                try connection.query("""
                    SELECT count(*) AS n FROM pg_stat_activity WHERE query LIKE 'INSERT INTO late%' AND state = 'active'
                    """).firstRow().decode("n", as: Int.self) == 0
            }
        })
        #expect(try pool.withConnection { try $0.query("SELECT count(*) AS n FROM late").firstRow().decode("n", as: Int.self) } == 0)
    }

    /// A long transaction (a snapshot's copy of whole tables) outlasts both limits, and the
    /// connection has its usual ones again afterwards.
    @Test func aLongTransaction_outlastsBothLimits_thenTheyHoldAgain() throws {
        let pool = try PoolFixtures.makePool(size: 1) { configuration in
            configuration.statementTimeout = .milliseconds(200)
            configuration.queryTimeout = .milliseconds(400)
        }
        let slept = try pool.withLongTransaction(limit: .seconds(5)) { connection in
            try connection.query("SELECT true AS slept FROM pg_sleep(0.6)").firstRow().decode("slept", as: Bool.self)
        }
        #expect(slept)
        let error = #expect(throws: PostgresError.self) {
            try pool.withConnection { try $0.query("SELECT pg_sleep(0.6)") }
        }
        #expect(error?.sqlState == .queryCanceled)
    }

    @Test func defaultQueryTimeout_leavesRoomForTheServersOwn() {
        var configuration = ConnectionPool.Configuration(conninfo: "", size: 1)
        #expect(configuration.statementTimeout == .seconds(3))
        #expect(configuration.queryTimeout == .milliseconds(4500))
        configuration.statementTimeout = .milliseconds(300)
        #expect(configuration.queryTimeout == .milliseconds(1800))
        configuration.queryTimeout = .seconds(10)
        #expect(configuration.queryTimeout == .seconds(10))
    }

    @Test func statementTimeout_isSetPerSession_butNotWithoutAClientDeadline() throws {
        let conninfo = try TestDatabase.makeDatabase()
        func setting(_ connection: PostgresConnection) throws -> String {
            try connection.query("SELECT current_setting('statement_timeout') AS value").first!.decode("value")
        }
        let pooled = try PostgresConnection(conninfo: conninfo, statementTimeout: .milliseconds(1500))
        #expect(try setting(pooled) == "1500ms")
        try pooled.reset()
        #expect(try setting(pooled) == "1500ms")
        let migrating = try PostgresConnection(conninfo: conninfo, queryTimeout: .zero)
        #expect(try setting(migrating) == "0")
    }
}
