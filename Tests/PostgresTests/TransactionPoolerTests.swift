import Postgres
import Testing
import TestSupport

/// Behind a transaction-mode pooler (`DATABASE_POOLER=transaction`) nothing of a session
/// may outlive a transaction: no statement stays prepared, no setting is made for the
/// session, while statements, pipelines (a BEGIN with its first statement, a statement with
/// its COMMIT, a precondition ahead of a write) and transactions work as before. Checked
/// here on PostgreSQL itself; `scripts/test` runs the end-to-end suites through PgBouncer.
@Suite struct TransactionPoolerTests {
    private static func prepared(_ connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT count(*)::int4 AS n FROM pg_prepared_statements").firstRow().decode("n")
    }

    @Test func behindAPooler_noStatementStaysPrepared_andNoSessionSettingIsMade() throws {
        let pool = try PoolFixtures.makePool(size: 1) {
            $0.behindTransactionPooler = true
            $0.sessionSettings = [(name: "posts.push", value: "on")]
        }
        defer { pool.close() }
        let (ids, prepared, push, timeout) = try pool.withConnection { connection in
            let ids: [Int32] = try (1...3).map { try connection.query("SELECT \(Int32($0)) AS id").firstRow().decode("id") }
            let push: String? = try connection.query("SELECT current_setting('posts.push', true) AS value").firstRow().decode("value")
            let timeout: String = try connection.query("SELECT current_setting('statement_timeout') AS value").firstRow().decode("value")
            return (ids, try Self.prepared(connection), push, timeout)
        }
        #expect(ids == [1, 2, 3] && prepared == 0)
        #expect(push == nil && timeout == "0")
        let total = try pool.withTransaction { connection -> Int32 in
            try connection.query("CREATE TEMP TABLE scratch (n int4) ON COMMIT DROP")
            try connection.query("INSERT INTO scratch VALUES (\(Int32(2))), (\(Int32(3)))")
            return try connection.queryCommitting("SELECT sum(n)::int4 AS total FROM scratch").firstRow().decode("total")
        }
        #expect(total == 5)
        #expect(try pool.withConnection { try Self.prepared($0) } == 0)
    }

    @Test func directly_statementsStayPrepared() throws {
        let pool = try PoolFixtures.makePool(size: 1)
        defer { pool.close() }
        let prepared = try pool.withConnection { connection in
            _ = try connection.query("SELECT \(Int32(1)) AS id")
            return try Self.prepared(connection)
        }
        #expect(prepared >= 1)
    }
}
