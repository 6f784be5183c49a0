import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// Sessions, `TOKEN_TTL` and the export (API.md "Sessions and the account"), in token mode.
@Suite struct SessionTests {
    private static func client(_ token: String, _ app: Application) throws -> APIClient {
        let client = try APIClient(port: app.server.port)
        client.headers["Authorization"] = "Bearer \(token)"
        return client
    }

    private static func signIn(_ email: String, device: String, in app: Application) throws -> APIClient {
        try client(try AuthTests.signIn(email, device: device, in: app, client: try APIClient(port: app.server.port)), app)
    }

    @Test func sessions_areListedWithoutSecrets_andRevokedOneByOneOrAllButThisOne() throws {
        let app = try TestApplication.start { $0.authMode = .token }
        defer { app.stop() }
        let phone = try Self.signIn("ash@example.com", device: "phone", in: app)
        let tablet = try Self.signIn("ash@example.com", device: "tablet", in: app)
        _ = try Self.signIn("blair@example.com", device: "other", in: app)

        let listed = try phone.get("/api/me/sessions")
        #expect(listed.status == 200)
        let sessions = try #require(listed.json["sessions"] as? [[String: Any]])
        #expect(sessions.map { $0["device_id"] as? String } == ["tablet", "phone"])
        #expect(sessions.map { $0["current"] as? Bool } == [false, true])
        #expect(Set(sessions[0].keys) == ["id", "device_id", "created_at", "last_used_at", "current"])
        let tabletID = try #require(sessions[0]["id"] as? Int)

        #expect(try phone.send("DELETE", "/api/me/sessions/\(tabletID)").status == 200)
        #expect(try tablet.get("/api/me").status == 401)
        #expect(try phone.send("DELETE", "/api/me/sessions/\(tabletID)").status == 404)
        let blairsID = try app.pool.withConnection { connection in
            try connection.query("SELECT t.id FROM tokens t JOIN users u ON u.id = t.user_id WHERE u.email = 'blair@example.com'")
                .firstRow().decode("id", as: Int64.self)
        }
        #expect(try phone.send("DELETE", "/api/me/sessions/\(blairsID)").status == 404)

        let laptop = try Self.signIn("ash@example.com", device: "laptop", in: app)
        let watch = try Self.signIn("ash@example.com", device: "watch", in: app)
        let revoked = try laptop.send("DELETE", "/api/me/sessions")
        #expect(revoked.status == 200 && revoked.json["revoked"] as? Int == 2)
        #expect(try phone.get("/api/me").status == 401 && watch.get("/api/me").status == 401)
        #expect(try laptop.get("/api/me").status == 200)
        #expect((try laptop.get("/api/me/sessions").json["sessions"] as? [Any])?.count == 1)
    }

    @Test func aTokenUnusedForItsLifetime_is401_andUseKeepsItAlive() throws {
        let app = try TestApplication.start {
            $0.authMode = .token
            $0.tokenLifetime = .seconds(300)
        }
        defer { app.stop() }
        let used = try Self.signIn("ash@example.com", device: "used", in: app)
        let idle = try Self.signIn("ash@example.com", device: "idle", in: app)
        try app.pool.withConnection { connection in
            try connection.query("""
                UPDATE tokens SET last_used_at = now() - CASE device_id WHEN 'idle' THEN interval '301 seconds'
                                                                          ELSE interval '200 seconds' END
                """)
        }
        #expect(try idle.get("/api/me").status == 401)
        #expect(try used.get("/api/me").status == 200)
        // That use moved its clock: it is still alive where the first 300 s would have ended.
        let lastUsed = try app.pool.withConnection { connection in
            try connection.query("SELECT extract(epoch FROM now() - last_used_at)::int AS age FROM tokens WHERE device_id = 'used'")
                .firstRow().decode("age", as: Int.self)
        }
        #expect(lastUsed < 10)
        #expect((try used.get("/api/me/sessions").json["sessions"] as? [[String: Any]])?.map { $0["device_id"] as? String }
                    == ["used"])
    }

    /// A TOKEN_TTL of seconds (an app's tests reaching their sign-in-again path) slides as
    /// a long one does: a token used every eighth of its lifetime outlives it, one left
    /// unused for twice its lifetime is 401. The lifetime passes on the server's clock,
    /// advanced by the test: nothing waits for it.
    @Test func aLifetimeOfSeconds_slidesWithUse_andEndsUnused() throws {
        let lifetime = Duration.seconds(3)
        let clock = ServerClock()
        let app = try TestApplication.start(clock: clock) {
            $0.authMode = .token
            $0.tokenLifetime = lifetime
        }
        defer { app.stop() }
        // The job's round would race the one below for the dead token's row.
        app.jobs.hold([.upkeepPrune])
        let idle = try Self.signIn("ash@example.com", device: "idle", in: app)
        let used = try Self.signIn("ash@example.com", device: "used", in: app)
        for eighth in 1...16 {
            clock.advance(by: lifetime / 8)
            let answer = try used.get("/api/me")
            #expect(answer.status == 200, "use \(eighth) eighths of a lifetime after signing in: \(answer.text)")
        }
        // Signed in before `used`, never used since: twice its lifetime has passed.
        let expired = try idle.get("/api/me")
        #expect(expired.status == 401 && expired.json["error"] as? String == "unauthorized", "\(expired.text)")
        #expect(try used.get("/api/me").status == 200)
        // The pruner sees the same clock: the dead token's row goes, the live one stays.
        #expect(try app.upkeepPruner.pruneOnce()["tokens"] == 1)
    }

    @Test func export_isOneDocumentOfEverything_streamedFromDisk() throws {
        let app = try TestApplication.start { $0.authMode = .token }
        defer { app.stop() }
        let ash = try Self.signIn("ash@example.com", device: "phone", in: app)
        let ashID = try #require((try ash.get("/api/me").json["user"] as? [String: Any])?["id"] as? Int)
        let post = try #require(try ash.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b"])
            .json["post"] as? [String: Any])
        #expect(try ash.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        #expect(try ash.send("POST", "/api/posts/\(post.id)/comments", json: ["body": "hi"]).status == 201)
        let other = try Self.signIn("blocked@example.com", device: "laptop", in: app)
        let blockedID = try #require((try other.get("/api/me").json["user"] as? [String: Any])?["id"] as? Int)
        #expect(try ash.send("PUT", "/api/users/\(blockedID)/block").status == 200)
        let followed = try Self.signIn("followed@example.com", device: "tablet", in: app)
        let followedID = try #require((try followed.get("/api/me").json["user"] as? [String: Any])?["id"] as? Int)
        #expect(try ash.send("PUT", "/api/users/\(followedID)/follow").status == 200)
        #expect(try ash.send("POST", "/api/reports", json: ["user_id": blockedID, "reason": "spam"]).status == 201)
        #expect(try followed.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        // More posts than a page of the export, written straight to the table.
        try app.pool.withConnection { connection in
            try connection.query("""
                INSERT INTO posts (user_id, title, summary, body)
                SELECT \(Int64(ashID)), 'bulk ' || n, 's', 'b' FROM generate_series(1, 1234) AS n
                """)
        }

        let export = try ash.get("/api/me/export")
        #expect(export.status == 200)
        #expect(export.header("Content-Disposition")?.hasPrefix("attachment") == true)
        let document = export.json
        #expect((document["user"] as? [String: Any])?["email"] as? String == "ash@example.com")
        #expect((document["profile"] as? [String: Any])?["user_id"] as? Int == ashID)
        #expect((document["sessions"] as? [[String: Any]])?.first?["device_id"] as? String == "phone")
        let posts = try #require(document["posts"] as? [[String: Any]])
        #expect(posts.count == 1235 && Set(posts.map(\.id)).count == 1235)
        #expect((document["comments"] as? [[String: Any]])?.first?["body"] as? String == "hi")
        #expect(document["likes"] as? [Int] == [post.id])
        #expect(document["blocks"] as? [Int] == [blockedID])
        #expect(document["follows"] as? [Int] == [followedID])
        #expect((document["reports"] as? [[String: Any]])?.map { $0["reason"] as? String } == ["spam"])
        let notifications = try #require(document["notifications"] as? [[String: Any]])
        #expect(notifications.map { $0["type"] as? String } == ["post.liked"])
        #expect((notifications.first?["actor"] as? [String: Any])?["user_id"] as? Int == followedID)
        #expect((document["push_tokens"] as? [Any])?.isEmpty == true)
        #expect(document["token"] == nil && !export.text.contains("token_hash"))
    }
}
