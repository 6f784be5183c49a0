import Foundation
@testable import PostsServer
import Testing
import TestSupport

/// The console's page, its assets and its read routes: the security headers on every
/// console answer, content-hashed asset URLs cached for a year, no inline script or style
/// in any file, and the moderator-only overview, user lookup, and a user's sessions and
/// the reports against them.
@Suite(.serialized) struct ConsoleTests {
    @Test func thePage_andItsAssets_carryTheSecurityHeaders_andAreCachedByContent() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let page = try client.get("/console")
        #expect(page.status == 200)
        #expect(page.header("Content-Security-Policy")?.hasPrefix("default-src 'self'") == true)
        #expect(page.header("X-Frame-Options") == "DENY" && page.header("Referrer-Policy") == "no-referrer")
        #expect(page.header("Cache-Control") == "no-cache")
        let assets = try #require(page.text.firstMatch(of: /\/console\/assets\/([0-9a-f]{16})\/app\.js/))
        let version = String(assets.output.1)
        let script = try client.get("/console/assets/\(version)/app.js")
        #expect(script.status == 200 && script.header("Content-Type")?.hasPrefix("text/javascript") == true)
        #expect(script.header("Cache-Control") == "public, max-age=31536000, immutable")
        #expect(script.header("X-Frame-Options") == "DENY")
        let etag = try #require(script.header("ETag"))
        #expect(try client.get("/console/assets/\(version)/app.js", headers: ["If-None-Match": etag]).status == 304)
        for missing in ["/console/assets/\(version)/nope.js", "/console/assets/0000000000000000/app.js",
                        "/console/assets/\(version)/..%2Findex.html", "/console/assets/\(version)/index.html"] {
            let answer = try client.get(missing)
            #expect(answer.status == 404, "\(missing)")
            #expect(answer.header("Content-Security-Policy") != nil, "\(missing)")
        }
    }

    /// A server whose console files are missing (a folder without `index.html`, or no
    /// folder) answers 503 under `/console`, with the console's headers, and serves the API.
    @Test func withoutItsFiles_theConsoleIs503_andTheAPIIsUnaffected() throws {
        let empty = ScratchDirectory.path("console")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        try Data("console.log(1)".utf8).write(to: URL(fileURLWithPath: empty).appendingPathComponent("app.js"))
        for folder in [empty, empty + "/absent"] {
            let app = try TestApplication.start { $0.consoleDirectory = folder }
            defer { app.stop() }
            let client = try APIClient(port: app.server.port)
            let page = try client.get("/console")
            #expect(page.status == 503 && page.text.contains("CONSOLE_DIR"), "\(folder): \(page.text)")
            #expect(page.header("Content-Security-Policy")?.hasPrefix("default-src 'self'") == true)
            #expect(try client.get("/console/assets/0000000000000000/app.js").status == 404)
            #expect(try client.get("/api/health").status == 200)
            #expect(try APIClient.user("ash@example.com", on: app).createPost("Still here")["id"] as? Int != nil)
        }
    }

    /// CSP `default-src 'self'` forbids inline scripts and style attributes: none may be
    /// written, in the page or by a module (which builds elements, never HTML from strings).
    @Test func noFile_needsUnsafeInline() throws {
        let folder = try #require(ConsoleAssets.locate(explicit: nil, environment: ["MIGRATIONS_DIR": TestDatabase.migrationsDirectory.path]))
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            for forbidden in ["style=", "<style", "innerHTML", "outerHTML", "insertAdjacentHTML", "eval(", "javascript:",
                              "new Function", "onclick=\"", "localStorage", "sessionStorage", "document.cookie", "http://", "https://"] {
                #expect(!text.contains(forbidden), "\(name) holds \(forbidden)")
            }
            if name == "index.html" {
                #expect(!text.contains("<script>") && text.contains("<script type=\"module\" src="))
            }
        }
    }

    @Test func overview_andUserLookup_areForModeratorsOnly() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let plain = try APIClient.user("plain@example.com", on: app)
        let mod = try APIClient.moderator("mod@example.com", on: app)
        let ash = try APIClient.user("ash@example.com", on: app)
        try ash.createPost("Hello")
        let anonymous = try APIClient(port: app.server.port)
        for path in ["/api/moderation/overview", "/api/moderation/users?q=ash"] {
            #expect(try plain.get(path).status == 403, "\(path)")
            #expect(try anonymous.get(path).status == 401, "\(path)")
        }
        let overview = try #require(try mod.get("/api/moderation/overview").json["overview"] as? [String: Any])
        let counts = try #require(overview["counts"] as? [String: [String: Int]])
        #expect(counts["users"]?["total"] == 3 && counts["posts"]?["total"] == 1 && counts["posts"]?["last_24h"] == 1)
        #expect((overview["health"] as? [String: String])?["database"] == "ok")
        #expect(overview["version"] as? String == ServerVersion.current)

        let ashID = try ash.userID()
        for query in ["ash", "ASH@example.com", String(ashID)] {
            let users = try #require(try mod.get("/api/moderation/users?q=\(query)").json["users"] as? [[String: Any]], "\(query)")
            let first = try #require(users.first, "\(query)")
            #expect((first["user"] as? [String: Any])?["id"] as? Int == ashID, "\(query)")
            #expect((first["posts"] as? [[String: Any]])?.first?["title"] as? String == "Hello")
            #expect(first["sessions"] as? Int == 0 && first["reports_against"] as? Int == 0)
        }
        #expect(try mod.get("/api/moderation/users?q=%20").status == 400)
        // Suspended people are found too: the moderator is the one who must find them.
        #expect(try mod.send("POST", "/api/moderation/users/\(ashID)/suspend", json: [:]).status == 200)
        let found = try #require(try mod.get("/api/moderation/users?q=ash").json["users"] as? [[String: Any]])
        #expect((found.first?["user"] as? [String: Any])?["suspended"] as? Bool == true)
    }

    /// A user's live sessions as their owner sees them (never the token), newest first, and
    /// every report on them, their posts or their comments with its reporter and state;
    /// moderators only, 404 for no one, pages by cursor.
    @Test func aUsersSessionsAndTheReportsAgainstThem_areForModeratorsOnly() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let mod = try APIClient.moderator("mod@example.com", on: app)
        let plain = try APIClient.user("plain@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        var tokens: [String] = []
        for device in ["phone", "laptop", "tablet"] {
            tokens.append(try AuthTests.signIn("ash@example.com", device: device, in: app, client: try APIClient(port: app.server.port)))
        }
        let ash = try APIClient(port: app.server.port)
        ash.headers["Authorization"] = "Bearer \(tokens[1])"
        let ashID = try ash.userID()
        #expect(try ash.send("POST", "/api/auth/logout").status == 200)  // the laptop's session ends
        ash.headers["Authorization"] = "Bearer \(tokens[2])"
        let sessions = "/api/moderation/users/\(ashID)/sessions", reports = "/api/moderation/users/\(ashID)/reports"
        let anonymous = try APIClient(port: app.server.port)
        for path in [sessions, reports] {
            #expect(try plain.get(path).status == 403, "\(path)")
            #expect(try anonymous.get(path).status == 401, "\(path)")
            #expect(try mod.get(path + "?limit=0").status == 400, "\(path)")
        }
        for path in ["/api/moderation/users/999999/sessions", "/api/moderation/users/999999/reports"] {
            #expect(try mod.get(path).status == 404, "\(path)")
        }

        let listed = try mod.get(sessions)
        #expect(listed.status == 200)
        let live = try #require(listed.json["sessions"] as? [[String: Any]])
        #expect(live.compactMap { $0["device_id"] as? String } == ["tablet", "phone"])
        #expect(live.allSatisfy { Set($0.keys) == ["id", "device_id", "created_at", "last_used_at", "current"] })
        #expect(live.allSatisfy { $0["current"] as? Bool == false })
        #expect(listed.json["next_cursor"] is NSNull)
        #expect(tokens.allSatisfy { !listed.text.contains($0) })
        let first = try mod.get(sessions + "?limit=1").json
        let cursor = try #require(first["next_cursor"] as? String)
        let rest = try mod.get(sessions + "?limit=1&cursor=\(cursor)").json
        #expect((rest["sessions"] as? [[String: Any]])?.first?["device_id"] as? String == "phone")
        #expect(rest["next_cursor"] is NSNull)

        // Against ash: their post, their comment, them. Not ash's: a report on blair's post.
        let ashsPost = try ash.createPost("Ash's post")
        let blairsPost = try blair.createPost("Blair's post")
        let comment = try ash.send("POST", "/api/posts/\(blairsPost.id)/comments", json: ["body": "a comment"])
        let commentID = try #require((comment.json["comment"] as? [String: Any])?["id"] as? String)
        for target: [String: Any] in [["post_id": ashsPost.id, "reason": "spam", "details": "on the post"],
                                      ["comment_id": commentID, "reason": "harassment"],
                                      ["user_id": ashID, "reason": "self_harm", "details": "on ash"]] {
            #expect(try blair.send("POST", "/api/reports", json: target).status == 201)
        }
        #expect(try plain.send("POST", "/api/reports", json: ["post_id": blairsPost.id, "reason": "spam"]).status == 201)
        let queue = try #require(try mod.get("/api/moderation/reports").json["reports"] as? [[String: Any]])
        let onComment = try #require(queue.first { ($0["target"] as? [String: Any])?["type"] as? String == "comment" })
        #expect(try mod.send("POST", "/api/moderation/reports/\(try #require(onComment["id"] as? Int))/resolve",
                             json: ["action": "dismiss"]).status == 200)

        let against = try #require(try mod.get(reports).json["reports"] as? [[String: Any]])
        #expect(against.map { $0["reason"] as? String } == ["self_harm", "harassment", "spam"])
        #expect(against.map { ($0["target"] as? [String: Any])?["type"] as? String } == ["user", "comment", "post"])
        #expect(against.map { $0["status"] as? String } == ["open", "resolved", "open"])
        #expect(against.map { $0["action"] as? String } == [nil, "dismiss", nil])
        #expect(against[1]["resolved_at"] is String && against[0]["resolved_at"] is NSNull)
        #expect(against.map { $0["details"] as? String } == ["on ash", "", "on the post"])
        #expect(against.allSatisfy { ($0["reporter"] as? [String: Any])?["user_id"] as? Int == (try? blair.userID()) })
        #expect(((against[2]["target"] as? [String: Any])?["id"] as? Int) == ashsPost.id)
        let found = try #require(try mod.get("/api/moderation/users?q=\(ashID)").json["users"] as? [[String: Any]])
        #expect(found.first?["reports_against"] as? Int == against.count)
        let page = try mod.get(reports + "?limit=2").json
        let next = try #require(page["next_cursor"] as? String)
        let last = try #require(try mod.get(reports + "?limit=2&cursor=\(next)").json["reports"] as? [[String: Any]])
        #expect(last.map { $0["reason"] as? String } == ["spam"])

        func lookedUp(_ id: Int) throws -> [String: Any]? {
            (try mod.get("/api/moderation/users?q=\(id)").json["users"] as? [[String: Any]])?.first
        }
        #expect(try lookedUp(ashID)?["sessions"] as? Int == 2)
        // A report stays on the record of the user it was about when its content goes.
        #expect(try ash.send("DELETE", "/api/posts/\(ashsPost.id)").status == 200)
        let kept = try #require(try mod.get(reports).json["reports"] as? [[String: Any]])
        #expect(kept.map { $0["reason"] as? String } == ["self_harm", "harassment", "spam"])
        #expect(try lookedUp(ashID)?["reports_against"] as? Int == 3)

        // A suspension ends every session: the list says so at once.
        #expect(try mod.send("POST", "/api/moderation/users/\(ashID)/suspend", json: [:]).status == 200)
        #expect((try mod.get(sessions).json["sessions"] as? [Any])?.isEmpty == true)
        #expect(try lookedUp(ashID)?["sessions"] as? Int == 0)

        // The lookup counts the sessions the page lists: none once TOKEN_TTL passes unused.
        _ = try AuthTests.signIn("plain@example.com", device: "phone", in: app, client: try APIClient(port: app.server.port))
        let plainID = try plain.userID()
        #expect(try lookedUp(plainID)?["sessions"] as? Int == 1)
        app.clock.advance(by: app.configuration.tokenLifetime + .seconds(1))
        #expect(try lookedUp(plainID)?["sessions"] as? Int == 0)
    }
}
