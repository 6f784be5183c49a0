import Foundation
@testable import PostsServer
import Testing
import TestSupport

/// The console's page, its assets and its two read routes: the security headers on every
/// console answer, content-hashed asset URLs cached for a year, no inline script or style
/// in any file, and the moderator-only overview and user lookup.
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
}
