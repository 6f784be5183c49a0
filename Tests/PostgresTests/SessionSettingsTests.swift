import Postgres
import Testing
import TestSupport

/// A pool's session settings hold on every connection it makes, from the first statement
/// on and after a reconnect; one the server refuses fails the connect, as a bad statement
/// timeout does, rather than leave a session without it.
@Suite struct SessionSettingsTests {
    private static func setting(_ name: String, _ connection: PostgresConnection) throws -> String? {
        try connection.query("SELECT current_setting(\(name), true) AS value").firstRow().decode("value")
    }

    @Test func everyConnection_hasTheSettings_fromItsFirstStatement() throws {
        let pool = try PoolFixtures.makePool(size: 2) {
            $0.sessionSettings = [(name: "posts.push", value: "on"), (name: "posts.quoted", value: "it's; -- not SQL")]
        }
        defer { pool.close() }
        let (firstPID, push, quoted) = try pool.withConnection { connection in
            (try PoolFixtures.backendPID(connection), try Self.setting("posts.push", connection),
             try Self.setting("posts.quoted", connection))
        }
        #expect(push == "on" && quoted == "it's; -- not SQL")
        // A transaction that sets it otherwise locally leaves the session's value alone.
        try pool.withTransaction { try $0.query("SELECT set_config('posts.push', 'off', true)") }
        #expect(try pool.withConnection { try Self.setting("posts.push", $0) } == "on")
        // The idle connection closed, the next one is new and has them too.
        pool.close()
        let (pid, value) = try pool.withConnection { connection in
            (try PoolFixtures.backendPID(connection), try Self.setting("posts.push", connection))
        }
        #expect(pid != firstPID && value == "on")
    }

    @Test func reset_appliesTheSettingsAgain() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let connection = try PostgresConnection(conninfo: conninfo, sessionSettings: [(name: "posts.push", value: "on")])
        #expect(try Self.setting("posts.push", connection) == "on")
        try connection.reset()
        #expect(try Self.setting("posts.push", connection) == "on")
        let plain = try PostgresConnection(conninfo: conninfo)
        #expect(try Self.setting("posts.push", plain) == nil)
    }

    @Test func aRefusedSetting_failsTheConnect_andThePoolSaysWhy() throws {
        let pool = try PoolFixtures.makePool(size: 1) { $0.sessionSettings = [(name: "no_such_setting", value: "1")] }
        defer { pool.close() }
        let error = #expect(throws: PostgresError.self) {
            try pool.withConnection { try $0.query("SELECT 1 AS one") }
        }
        #expect(error?.kind == .connectionFailed)
        #expect(error?.details.contains("setting no_such_setting") == true)
    }
}
