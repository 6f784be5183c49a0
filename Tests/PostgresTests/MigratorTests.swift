import Dispatch
import Foundation
import Postgres
import Synchronization
import Testing
import TestSupport

@Suite struct MigratorTests {
    private let migrations = [
        Migrator.Migration(version: "0001", name: "first", sql: "CREATE TABLE a (id int); INSERT INTO a VALUES (1);"),
        Migrator.Migration(version: "0002", name: "second", sql: "CREATE TABLE b (id int); INSERT INTO b SELECT id + 1 FROM a;"),
    ]

    private func count(_ conninfo: String, _ table: String) throws -> Int {
        let connection = try PostgresConnection(conninfo: conninfo)
        return try connection.query("SELECT count(*) AS n FROM \(unsafeSQL: table)").first!.decode("n")
    }

    @Test func migrations_applyInOrderOnce() throws {
        let conninfo = try TestDatabase.makeEmptyDatabase()
        let migrator = Migrator(migrations: migrations.reversed())
        #expect(try migrator.migrate(conninfo: conninfo) == ["0001_first.sql", "0002_second.sql"])
        #expect(try migrator.migrate(conninfo: conninfo) == [])
        #expect(try count(conninfo, "b") == 1)
        #expect(try count(conninfo, "schema_migrations") == 2)
    }

    @Test func concurrentMigrators_applyEachFileExactlyOnce() throws {
        let conninfo = try TestDatabase.makeEmptyDatabase()
        let migrator = Migrator(migrations: migrations)
        let applied = Mutex<[String]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            do {
                let names = try migrator.migrate(conninfo: conninfo)
                applied.withLock { $0 += names }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(applied.withLock { $0.sorted() } == ["0001_first.sql", "0002_second.sql"])
        #expect(try count(conninfo, "a") == 1)
    }

    @Test func changedMigration_isRefusedWithItsName() throws {
        let conninfo = try TestDatabase.makeEmptyDatabase()
        try Migrator(migrations: migrations).migrate(conninfo: conninfo)
        var edited = migrations
        edited[0] = Migrator.Migration(version: "0001", name: "first", sql: "CREATE TABLE a (id bigint);")
        let error = #expect(throws: PostgresError.self) { try Migrator(migrations: edited).migrate(conninfo: conninfo) }
        #expect(error?.kind == .migration)
        #expect(error?.details.contains("0001_first.sql") == true)
    }

    @Test func failingMigration_leavesNothingBehind() throws {
        let conninfo = try TestDatabase.makeEmptyDatabase()
        let broken = migrations + [Migrator.Migration(version: "0003", name: "broken", sql: "CREATE TABLE c (id int); SELECT nonsense;")]
        let error = #expect(throws: PostgresError.self) { try Migrator(migrations: broken).migrate(conninfo: conninfo) }
        #expect(error?.details.contains("0003_broken.sql") == true)
        #expect(try count(conninfo, "schema_migrations") == 2)
        #expect(throws: PostgresError.self) { try count(conninfo, "c") }
    }

    /// API.md: migrations need no superuser, only a role that owns its database.
    @Test func repositoryMigrations_applyAsAnOrdinaryRole() throws {
        let cluster = try TestDatabase.cluster()
        let admin = try PostgresConnection(conninfo: cluster.conninfo())
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let role = "app_\(suffix)", database = "owned_\(suffix)"
        try admin.execute(unsafeSQL: "CREATE ROLE \(role) LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")
        try admin.execute(unsafeSQL: "CREATE DATABASE \(database) OWNER \(role)")
        let conninfo = "host=\(cluster.socketDirectory) port=\(cluster.port) user=\(role) dbname=\(database)"
        let applied = try Migrator(directory: TestDatabase.migrationsDirectory).migrate(conninfo: conninfo)
        #expect(applied.first == "0001_initial_schema.sql")
        let connection = try PostgresConnection(conninfo: conninfo)
        let isSuperuser: Bool = try connection.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").first!.decode("rolsuper")
        #expect(!isSuperuser)
        try connection.query("INSERT INTO users (email) VALUES ('a@x') RETURNING id")
    }

    /// Search's extensions (migration 0021): a role that may not create them (it does not
    /// own the database) is told what a superuser must run; once they are there, it goes on.
    @Test func searchExtensions_aRoleThatMayNotCreateThem_isToldWhatToRun() throws {
        let cluster = try TestDatabase.cluster()
        let admin = try PostgresConnection(conninfo: cluster.conninfo())
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let role = "guest_\(suffix)", database = "lent_\(suffix)"
        try admin.execute(unsafeSQL: "CREATE ROLE \(role) LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")
        try admin.execute(unsafeSQL: "CREATE DATABASE \(database)")
        let owner = try PostgresConnection(conninfo: cluster.conninfo(database: database))
        try owner.execute(unsafeSQL: "GRANT CREATE ON SCHEMA public TO \(role)")
        let conninfo = "host=\(cluster.socketDirectory) port=\(cluster.port) user=\(role) dbname=\(database)"
        let migrator = try Migrator(directory: TestDatabase.migrationsDirectory)
        let error = #expect(throws: PostgresError.self) { try migrator.migrate(conninfo: conninfo) }
        let said = error?.details ?? ""
        #expect(said.contains("0021_search.sql") && said.contains("unaccent") && said.contains("CREATE EXTENSION"), "\(said)")
        try owner.execute(unsafeSQL: "CREATE EXTENSION unaccent")
        try owner.execute(unsafeSQL: "CREATE EXTENSION pg_trgm")
        #expect(try migrator.migrate(conninfo: conninfo).first == "0021_search.sql")
    }

    @Test func repositoryMigrations_load() throws {
        let migrator = try Migrator(directory: TestDatabase.migrationsDirectory)
        #expect(migrator.migrations.first?.fileName == "0001_initial_schema.sql")
    }
}
