import Foundation

/// Applies `migrations/NNNN_name.sql` files in order, each in its own transaction, recorded
/// in `schema_migrations` with a SHA-256 checksum (computed by PostgreSQL's `sha256()`), all
/// under an advisory lock so that servers starting together apply each file exactly once.
/// A file that changed after it was applied stops everything with an error naming it.
public struct Migrator: Sendable {
    public struct Migration: Sendable, Equatable {
        public let version: String
        public let name: String
        public let sql: String

        public init(version: String, name: String, sql: String) {
            self.version = version
            self.name = name
            self.sql = sql
        }

        public var fileName: String { "\(version)_\(name).sql" }
    }

    /// Any constant works; this one is "posts-server migrations" folded into 63 bits.
    private static let advisoryLockKey: Int64 = 0x706F_7374_735F_6D67

    public let migrations: [Migration]

    public init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Reads every `NNNN_name.sql` in the directory; other files are ignored.
    public init(directory: URL) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        var migrations: [Migration] = []
        for fileName in names.sorted() where fileName.hasSuffix(".sql") {
            let stem = fileName.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), stem[..<underscore].count == 4,
                  stem[..<underscore].allSatisfy(\.isASCII), stem[..<underscore].allSatisfy(\.isNumber) else {
                throw PostgresError(.migration, details: "\(fileName): migration files are named NNNN_name.sql")
            }
            let version = String(stem[..<underscore])
            if let clash = migrations.first(where: { $0.version == version }) {
                throw PostgresError(.migration, details: "\(fileName) and \(clash.fileName) share version \(version)")
            }
            let sql = try String(contentsOf: directory.appendingPathComponent(fileName), encoding: .utf8)
            migrations.append(Migration(version: version, name: String(stem[stem.index(after: underscore)...]), sql: sql))
        }
        self.init(migrations: migrations)
    }

    /// Applies what is pending; returns the file names applied now.
    @discardableResult
    public func migrate(conninfo: String) throws -> [String] {
        let connection = try PostgresConnection(conninfo: conninfo, queryTimeout: .zero)
        defer { connection.close() }
        try connection.query("SELECT pg_advisory_lock(\(Self.advisoryLockKey))")
        defer { _ = try? connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))") }
        try connection.execute(unsafeSQL: """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version text PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """)
        var applied: [String: String] = [:]
        for row in try connection.query("SELECT version, checksum FROM schema_migrations").rows {
            applied[try row.decode("version")] = try row.decode("checksum", as: String.self)
        }
        var appliedNow: [String] = []
        for migration in migrations {
            let checksum: String = try connection.query(
                "SELECT encode(sha256(convert_to(\(migration.sql), 'UTF8')), 'hex') AS checksum"
            ).firstRow().decode("checksum")
            if let recorded = applied[migration.version] {
                guard recorded == checksum else {
                    throw PostgresError(.migration, details: """
                        migration \(migration.fileName) has changed since it was applied \
                        (checksum \(recorded.prefix(12))… is now \(checksum.prefix(12))…); \
                        add a new migration instead of editing an applied one
                        """)
                }
                continue
            }
            try apply(migration, checksum: checksum, on: connection)
            appliedNow.append(migration.fileName)
        }
        return appliedNow
    }

    private func apply(_ migration: Migration, checksum: String, on connection: PostgresConnection) throws {
        try connection.execute(unsafeSQL: "BEGIN")
        do {
            try connection.execute(unsafeSQL: migration.sql)
            try connection.query("""
                INSERT INTO schema_migrations (version, name, checksum)
                VALUES (\(migration.version), \(migration.name), \(checksum))
                """)
            try connection.execute(unsafeSQL: "COMMIT")
        } catch {
            try? connection.execute(unsafeSQL: "ROLLBACK")
            throw PostgresError(.migration, sqlState: error.sqlState,
                                details: "migration \(migration.fileName) failed: \(error.details)")
        }
    }
}
