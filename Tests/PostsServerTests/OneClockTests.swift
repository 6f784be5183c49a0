import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// API.md "The clock": every time the server keeps follows one clock, `ServerClock`, so that
/// moving it moves the server's time. No SQL reads the database's own now; and what the
/// contract times (a code's life, the send-code hour, an Idempotency-Key's day, a change's
/// retention) passes when the clock is advanced, with nothing waited out. (The per-address
/// limit's minute: `AbuseLimitTests`; tokens: `SessionTests`; retention: `RetentionTests`.)
@Suite struct OneClockTests {
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// The database's clock, however spelled: `now()`, the SQL-standard names, `'now'`.
    static func rawNow() -> Regex<AnyRegexOutput> {
        try! Regex(
            #"(^|[^\w.])now\s*\(\s*\)|\b(clock_timestamp|statement_timestamp|transaction_timestamp|current_timestamp|current_date|current_time|localtimestamp|localtime)\b|'now'"#
        ).ignoresCase()
    }

    /// What may read it, by file and line, each with why.
    static let allowed: [(file: String, line: String, why: String)] = [
        ("PostsServer/Support/ServerClock.swift", "ELSE now() + make_interval(",
         "the clock itself: the database's now moved by the offset"),
        ("PostsServer/Support/ServerClock.swift", "realNow: SQLQuery = \"now()\"",
         "the clock's own setting: an offset is worked out from real time (DevClock)"),
        ("Postgres/Migrator.swift", "applied_at timestamptz NOT NULL DEFAULT now()",
         "when a migration ran is the operator's real time, and the Postgres module knows no ServerClock"),
    ]

    /// `file:line: text` of every raw now in a .swift file under Sources/, outside comments
    /// and Swift's own `now()` functions.
    static func rawNowReads() throws -> [(file: String, line: Int, text: String)] {
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }.sorted() ?? []
        let rawNow = Self.rawNow()
        var found: [(file: String, line: Int, text: String)] = []
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//"), !code.contains("func now()"), line.contains(rawNow) else { continue }
                found.append((file, index + 1, code))
            }
        }
        return found
    }

    @Test func noSQL_readsTheDatabasesOwnNow() throws {
        let found = try Self.rawNowReads()
        #expect(found.count > 1, "the scan found no file: \(Self.sources.path)")
        let raw = found.filter { read in !Self.allowed.contains { read.file == $0.file && read.text.contains($0.line) } }
        #expect(raw.isEmpty, """
            SQL must read the server's clock (`\\(clock.now)`, ServerClock), not the database's:
            \(raw.map { "Sources/\($0.file):\($0.line): \($0.text)" }.joined(separator: "\n"))
            """)
        // An allowance that no longer matches anything goes too.
        for allowance in Self.allowed {
            #expect(found.contains { $0.file == allowance.file && $0.text.contains(allowance.line) },
                    "stale allowance: \(allowance.file): \(allowance.line)")
        }
    }

    /// The scan itself: it sees SQL's spellings and passes over Swift's clocks and comments.
    @Test func theScan_tellsSQLFromSwift() {
        let rawNow = Self.rawNow()
        for sql in ["SET revoked_at = now()", "created_at > NOW () - interval '1 day'", "clock_timestamp() - at",
                    "DEFAULT CURRENT_TIMESTAMP", "'now'::timestamptz", "age > current_date"] {
            #expect(sql.contains(rawNow), "\(sql)")
        }
        for swift in ["DispatchTime.now()", "Self.now()", "ContinuousClock.now", "wait(timeout: .now() + 5)",
                      "Timestamp.now()", "\\(clock.now) - interval '1 hour'", "let nowValue = 1"] {
            #expect(!swift.contains(rawNow), "\(swift)")
        }
    }

    /// A code lives ten minutes of the clock, and the send-code limit is an hour of it.
    @Test func codesAndTheirLimit_followTheClock() throws {
        let app = try TestApplication.start { $0.authMode = .token }
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let send = { try client.send("POST", "/api/auth/send-code", json: ["email": "ash@example.com"]).status }
        for _ in 0..<LoginCodes.maxPerHour { #expect(try send() == 200) }
        #expect(try send() == 429)
        app.clock.advance(by: .seconds(3601))
        #expect(try send() == 200, "the hour passed on the server's clock")

        let code = try AuthTests.latestCode(for: "ash@example.com", in: app)
        app.clock.advance(by: .seconds(LoginCodes.lifetimeMinutes * 60 + 1))
        let late = try client.send("POST", "/api/auth/verify-code", json: ["email": "ash@example.com", "code": code])
        #expect(late.status == 401, "a code ten minutes old by the clock is dead: \(late.text)")
    }

    /// An Idempotency-Key answers its first answer again for a day of the clock, not after.
    @Test func anIdempotencyKey_lastsADayOfTheClock() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient.user("ash@example.com", on: app)
        client.headers["Idempotency-Key"] = "one-day"
        let fields = ["title": "t", "summary": "s", "body": "b"]
        let first = try client.send("POST", "/api/posts", json: fields)
        #expect(first.status == 201)
        app.clock.advance(by: .seconds(23 * 3600))
        #expect(try client.send("POST", "/api/posts", json: fields).text == first.text, "replayed within the day")
        app.clock.advance(by: .seconds(2 * 3600))
        let again = try client.send("POST", "/api/posts", json: fields)
        #expect(again.status == 201 && again.text != first.text, "a day later the key is new again")
    }

    /// Changes go once older than CHANGES_RETENTION by the clock.
    @Test func changes_arePrunedByTheClock() throws {
        let app = try TestApplication.start { $0.changesRetention = .seconds(3600) }
        defer { app.stop() }
        app.jobs.hold([.changesPrune])
        let client = try APIClient.user("ash@example.com", on: app)
        _ = try client.createPost("kept an hour")
        #expect(try app.changePruner.pruneOnce() == 0)
        app.clock.advance(by: .seconds(3601))
        #expect(try app.changePruner.pruneOnce() > 0)
    }
}
