import Postgres
import TestSupport

/// What the pool, transaction and timeout tests share: a pool over a fresh database, and
/// a few one-line questions to ask a connection.
enum PoolFixtures {
    static func makePool(size: Int = 2, configure: (inout ConnectionPool.Configuration) -> Void = { _ in }) throws -> ConnectionPool {
        var configuration = ConnectionPool.Configuration(conninfo: try TestDatabase.makeDatabase(), size: size)
        configure(&configuration)
        return ConnectionPool(configuration)
    }

    /// Identifies the server session: the same pid means the same connection.
    static func backendPID(_ connection: PostgresConnection) throws -> Int32 {
        try connection.query("SELECT pg_backend_pid() AS pid").first!.decode("pid")
    }

    static func userCount(_ connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT count(*) AS n FROM users").first!.decode("n")
    }

    static func userCount(_ pool: ConnectionPool) throws -> Int {
        try pool.withConnection { try userCount($0) }
    }

    /// A table of counters for conflict tests: rows 1 and 2, both at zero.
    static func makeCounters(_ pool: ConnectionPool) throws {
        try pool.withConnection { connection in
            try connection.execute(unsafeSQL: """
                CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL);
                INSERT INTO counters VALUES (1, 0), (2, 0);
                """)
        }
    }

    static func counter(_ id: Int32, on connection: PostgresConnection) throws -> Int32 {
        try connection.query("SELECT n FROM counters WHERE id = \(id)").first!.decode("n")
    }
}
