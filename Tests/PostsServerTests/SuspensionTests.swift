import Foundation
import PostsServer
import Testing
import TestSupport

/// Suspension end to end (API.md "Safety"): everything the user made disappears from every
/// read, stream and write path, sign-in is refused, and unsuspending restores it unchanged.
@Suite struct SuspensionTests {
    @Test func suspension_hidesEverything_refusesSignIn_andUndoesUnchanged() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let post = try ash.createPost("by ash").id
        let blairs = try blair.createPost("by blair").id
        #expect(try ash.send("POST", "/api/posts/\(blairs)/comments", json: ["body": "ash's comment"]).status == 201)
        let ashID = try #require(try ash.post(post)?.int("user_id"))
        #expect(try blair.send("POST", "/api/reports", json: ["user_id": ashID, "reason": "harassment"]).status == 201)
        let mod = try APIClient.moderator("mod@example.com", on: app)
        let report = try #require((try mod.get("/api/moderation/reports").json["reports"] as? [[String: Any]])?.first?["id"] as? Int)
        #expect(try mod.send("POST", "/api/moderation/reports/\(report)/resolve", json: ["action": "suspend"]).status == 200)

        let reader = try APIClient(port: app.server.port)
        #expect(try reader.get("/api/posts/\(post)").status == 404)
        #expect(!((try reader.get("/api/posts/recent").json["posts"] as? [[String: Any]]) ?? []).contains { $0["id"] as? Int == post })
        #expect((try reader.get("/api/posts/\(blairs)/comments").json["comments"] as? [Any])?.isEmpty == true)
        // Trust mode's email is refused like a revoked token would be.
        #expect(try ash.get("/api/me").status == 403)

        #expect(try mod.send("POST", "/api/moderation/users/\(ashID)/unsuspend", json: ["note": "appeal"]).status == 200)
        #expect(try reader.get("/api/posts/\(post)").json["post"] != nil)
        #expect((try reader.get("/api/posts/\(blairs)/comments").json["comments"] as? [Any])?.count == 1)
        #expect((try ash.get("/api/me").json["user"] as? [String: Any])?["suspended"] as? Bool == false)
        let log = try #require(try mod.get("/api/moderation/log").json["entries"] as? [[String: Any]])
        #expect(log.map { $0["action"] as? String } == ["unsuspend", "suspend"])
        #expect(try mod.send("POST", "/api/moderation/users/999999/suspend").status == 404)
    }

    /// Token mode: a suspension revokes the user's tokens and verify-code refuses it (403),
    /// and a token is refused whenever its user is suspended, even one nothing revoked.
    @Test func suspension_inTokenMode_refusesTokensAndSignIn() throws {
        let app = try TestApplication.start { $0.authMode = .token }
        defer { app.stop() }
        func signIn(_ email: String) throws -> (APIClient, RawHTTPClient.Response) {
            let client = try APIClient(port: app.server.port)
            #expect(try client.send("POST", "/api/auth/send-code", json: ["email": email]).status == 200)
            let verified = try client.send("POST", "/api/auth/verify-code", json: [
                "email": email, "code": try AuthTests.latestCode(for: email, in: app)])
            if let token = verified.json["token"] as? String { client.headers["Authorization"] = "Bearer \(token)" }
            return (client, verified)
        }
        let (ash, _) = try signIn("ash@example.com")
        let ashID = try #require((try ash.get("/api/me").json["user"] as? [String: Any])?["id"] as? Int)
        let (mod, _) = try signIn("mod@example.com")
        _ = try Roles.grant("moderator", toEmail: "mod@example.com", conninfo: try #require(app.configuration.directDatabaseURL))
        #expect(try mod.send("POST", "/api/moderation/users/\(ashID)/suspend", json: [:]).status == 200)
        #expect(try ash.get("/api/me").status == 401)
        let (_, refused) = try signIn("ash@example.com")
        #expect(refused.status == 403 && refused.json["message"] as? String == "this account is suspended")
        #expect(try mod.send("POST", "/api/moderation/users/\(ashID)/unsuspend", json: [:]).status == 200)
        let (again, _) = try signIn("ash@example.com")
        #expect(try again.get("/api/me").status == 200)
        // Suspended behind the routes' back (no revocation): the lookup still refuses the token.
        try app.pool.withConnection { try $0.query("UPDATE users SET suspended_at = now() WHERE id = \(Int64(ashID))") }
        #expect(try again.get("/api/me").status == 401)
    }

    /// A suspended user's post cannot be read, so it cannot be liked, commented on, posted
    /// or moved under either (404); after unsuspension it can.
    @Test func suspendedAuthorsPosts_refuseInteraction_untilUnsuspended() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let post = try ash.createPost("by ash")
        let ashID = try #require(post.int("user_id"))
        let movable = try blair.createPost("blair's root").id
        let mod = try APIClient.moderator("mod@example.com", on: app)
        #expect(try mod.send("POST", "/api/moderation/users/\(ashID)/suspend", json: [:]).status == 200)

        func statuses() throws -> [Int] {
            [try blair.send("PUT", "/api/posts/\(post.id)/like").status,
             try blair.send("POST", "/api/posts/\(post.id)/comments", json: ["body": "hello"]).status,
             try blair.send("POST", "/api/posts", json: ["title": "reply", "summary": "s", "body": "b", "parent_id": post.id]).status,
             try blair.send("POST", "/api/posts/reparent", json: ["post_id": movable, "parent_id": post.id]).status]
        }
        let refused = try statuses()
        #expect(refused == [404, 404, 404, 404])
        #expect(try ash.post(post.id) == nil)
        #expect(try mod.send("POST", "/api/moderation/users/\(ashID)/unsuspend", json: [:]).status == 200)
        let allowed = try statuses()
        #expect(allowed == [200, 201, 201, 200])
        #expect(try ash.post(post.id)?.int("like_count") == 1)
    }

    /// A suspended user's changes leave `/api/changes` for everyone (as its content leaves
    /// every read) and come back with it.
    @Test func suspendedUsersChanges_leaveTheChangeFeed() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let reader = try APIClient(port: app.server.port)
        let since = try #require(try reader.get("/api/changes").json["next_since"] as? String)
        let ash = try APIClient.user("ash@example.com", on: app)
        let carol = try APIClient.user("carol@example.com", on: app)
        let ashID = try #require(try ash.createPost("by ash").int("user_id"))
        _ = try carol.createPost("by carol")
        func titles() throws -> [String] {
            let changes = (try reader.get("/api/changes?since=\(since)").json["changes"] as? [[String: Any]]) ?? []
            return changes.compactMap { ($0["post"] as? [String: Any])?["title"] as? String }
        }
        // Changes are delivered once the cluster's horizon passes them (see BlockChangesTests).
        #expect(try eventually(timeout: .seconds(60)) { try titles().count == 2 })
        let mod = try APIClient.moderator("mod@example.com", on: app)
        #expect(try mod.send("POST", "/api/moderation/users/\(ashID)/suspend", json: [:]).status == 200)
        #expect(try titles() == ["by carol"])
        #expect(try mod.send("POST", "/api/moderation/users/\(ashID)/unsuspend", json: [:]).status == 200)
        #expect(try titles() == ["by ash", "by carol"])
    }
}
