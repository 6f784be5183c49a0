import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The operator's side of the word filter, against the built executable: the list is read
/// at start (a missing one stops it) and again on SIGHUP, which never stops the server.
/// Each wait is on a log line with a deadline, never a sleep.
@Suite struct BlockedWordsSignalTests {
    @Test func sighup_reloadsTheList_andABrokenFileKeepsThePreviousOne() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let path = try BlockedWordsFileTests.write("# first list\nalpha\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let process = try ServerProcess(["serve", "--no-migrate", "--blocked-words-file", path],
                                        environment: ["DATABASE_URL": conninfo, "PORT": "0", "AUTH_MODE": "trust"])
        let port = try #require(process.listeningPort())
        #expect(process.lines.contains { $0.contains("loaded blocked words") && $0.contains("entries=1") })
        let client = try APIClient(port: port)
        client.headers["X-User-Email"] = "ash@example.com"
        func bioStatus(_ bio: String) throws -> Int {
            try client.send("PATCH", "/api/profiles/me", json: ["bio": bio]).status
        }
        #expect(try bioStatus("alpha") == 422)
        #expect(try bioStatus("beta") == 200)

        try Data("alpha\nbeta\n".utf8).write(to: URL(fileURLWithPath: path))
        process.signal(SIGHUP)
        let reloaded = try #require(process.waitForLine(containing: "entries=2"))
        #expect(reloaded.contains("loaded blocked words"))
        #expect(try bioStatus("beta") == 422)

        try Data([0x62, 0x65, 0xFF, 0x0A]).write(to: URL(fileURLWithPath: path))
        process.signal(SIGHUP)
        let warning = try #require(process.waitForLine(containing: "cannot reload blocked words"))
        #expect(warning.contains("not UTF-8"), "\(warning)")
        #expect(try bioStatus("beta") == 422, "the previous list stays in force")
        #expect(try bioStatus("gamma") == 200)

        process.signal(SIGTERM)
        #expect(process.waitForExit() == 0)
    }

    /// Without a list, SIGHUP is still no reason to stop.
    @Test func sighup_withoutAList_keepsServing() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let process = try ServerProcess(["serve", "--no-migrate"], environment: ["DATABASE_URL": conninfo, "PORT": "0"])
        let port = try #require(process.listeningPort())
        process.signal(SIGHUP)
        #expect(process.waitForLine(containing: "nothing to reload") != nil)
        #expect(try RawHTTPClient(port: port).exchange("GET /api/health HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        process.signal(SIGTERM)
        #expect(process.waitForExit() == 0)
    }

    @Test func missingList_stopsTheStart_namingTheVariable() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let missing = NSTemporaryDirectory() + "no-such-list-\(UUID().uuidString)"
        let process = try ServerProcess(["serve", "--no-migrate"],
                                        environment: ["DATABASE_URL": conninfo, "PORT": "0", "BLOCKED_WORDS_FILE": missing])
        #expect(try #require(process.waitForExit()) != 0)
        #expect(process.lines.contains { $0.contains("BLOCKED_WORDS_FILE \(missing): No such file") }, "\(process.lines)")
        #expect(!process.lines.contains { $0.contains("listening on") })
    }
}
