import Foundation
import PostsServer
import Testing
import TestSupport

/// Reports, roles and moderation end to end (API.md "Safety"): the report rules, the role
/// command, 403 for non-moderators, the queue, each resolution and the log that records
/// every action. Suspension is in `SuspensionTests`.
@Suite struct ModerationTests {
    @Test func reports_checkTheirTarget_reason_andAnswerTheOpenOneAgain() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost().id
        let blair = try APIClient.user("blair@example.com", on: app)
        let first = try blair.send("POST", "/api/reports", json: ["post_id": post, "reason": "spam", "details": "ads"])
        #expect(first.status == 201)
        let report = try #require(first.json["report"] as? [String: Any])
        #expect(report["status"] as? String == "open" && report["id"] is Int && report["created_at"] is String)
        let again = try blair.send("POST", "/api/reports", json: ["post_id": post, "reason": "hate"])
        #expect(again.status == 200 && (again.json["report"] as? [String: Any])?["id"] as? Int == report["id"] as? Int)
        #expect(try blair.send("POST", "/api/reports", json: ["post_id": post, "user_id": 1, "reason": "spam"]).status == 422)
        #expect(try blair.send("POST", "/api/reports", json: ["reason": "spam"]).status == 422)
        #expect(try blair.send("POST", "/api/reports", json: ["post_id": post, "reason": "boring"]).status == 422)
        #expect(try blair.send("POST", "/api/reports", json: ["post_id": post, "reason": "other",
                                                              "details": String(repeating: "x", count: 1001)]).status == 422)
        #expect(try blair.send("POST", "/api/reports", json: ["post_id": 999_999, "reason": "spam"]).status == 404)
        #expect(try blair.send("POST", "/api/reports", json: ["user_id": 999_999, "reason": "spam"]).status == 404)
        #expect(try APIClient(port: app.server.port).send("POST", "/api/reports", json: ["post_id": post, "reason": "spam"]).status == 401)
        // Block and report: what a block hides can still be reported.
        let carol = try APIClient.user("carol@example.com", on: app)
        #expect(try carol.send("PUT", "/api/users/\(try #require(try ash.post(post)?.int("user_id")))/block").status == 200)
        #expect(try carol.get("/api/posts/\(post)").status == 404)
        #expect(try carol.send("POST", "/api/reports", json: ["post_id": post, "reason": "harassment"]).status == 201)
        // The role shows in /api/me; the command refuses an unknown address.
        let me = try ash.get("/api/me").json["user"] as? [String: Any]
        #expect(me?["role"] as? String == "user" && me?["suspended"] as? Bool == false)
        #expect(try Roles.grant("moderator", toEmail: "nobody@example.com", conninfo: try #require(app.configuration.directDatabaseURL)) == nil)
    }

    @Test func onlyModerators_reachTheModerationRoutes() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        for path in ["/api/moderation/reports", "/api/moderation/log"] { #expect(try ash.get(path).status == 403) }
        #expect(try ash.send("POST", "/api/moderation/users/1/suspend", json: [:]).status == 403)
        #expect(try ash.send("POST", "/api/moderation/reports/1/resolve", json: ["action": "dismiss"]).status == 403)
        let mod = try APIClient.moderator("mod@example.com", on: app)
        #expect(try mod.get("/api/moderation/reports").status == 200)
        #expect(try mod.get("/api/moderation/reports?status=pending").status == 400)
        #expect(try mod.send("POST", "/api/moderation/reports/999/resolve", json: ["action": "dismiss"]).status == 404)
    }

    @Test func queue_resolve_andLog() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let carol = try APIClient.user("carol@example.com", on: app)
        let spam = try ash.createPost("spam").id
        let kept = try ash.createPost("with a reply").id
        _ = try blair.createPost("blair's reply", parent: kept)
        let comment = try #require(try ash.send("POST", "/api/posts/\(kept)/comments", json: ["body": "rude"]).json["comment"] as? [String: Any])
        for reporter in [blair, carol] { #expect(try reporter.send("POST", "/api/reports", json: ["post_id": spam, "reason": "spam"]).status == 201) }
        #expect(try blair.send("POST", "/api/reports", json: ["post_id": kept, "reason": "other"]).status == 201)
        #expect(try carol.send("POST", "/api/reports", json: ["comment_id": comment["id"] as? String, "reason": "harassment"]).status == 201)
        let mod = try APIClient.moderator("mod@example.com", on: app)

        let queue = try #require(try mod.get("/api/moderation/reports").json["reports"] as? [[String: Any]])
        #expect(queue.count == 4 && queue.first?["reports_on_target"] as? Int == 2)
        #expect((queue.first?["reporter"] as? [String: Any])?["username"] as? String == "blair")
        let target = try #require(queue.first?["target"] as? [String: Any])
        #expect(target["type"] as? String == "post" && (target["post"] as? [String: Any])?["title"] as? String == "spam")
        #expect(target["id"] as? Int == spam)

        // remove: both reports on the spam post close; the post is gone.
        let spamReport = try #require(queue.first?["id"] as? Int)
        #expect(try mod.send("POST", "/api/moderation/reports/\(spamReport)/resolve", json: ["action": "remove", "note": "ads"]).status == 200)
        #expect(try ash.get("/api/posts/\(spam)").status == 404)
        #expect(try mod.send("POST", "/api/moderation/reports/\(spamReport)/resolve", json: ["action": "dismiss"]).status == 409)
        let open = try #require(try mod.get("/api/moderation/reports").json["reports"] as? [[String: Any]])
        #expect(open.count == 2)
        // remove on a post with someone else's reply: a tombstone, the reply stays.
        let keptReport = try #require(open.first { ($0["target"] as? [String: Any])?["type"] as? String == "post" }?["id"] as? Int)
        #expect(try mod.send("POST", "/api/moderation/reports/\(keptReport)/resolve", json: ["action": "remove"]).status == 200)
        #expect(try ash.post(kept)?["deleted"] as? Bool == true)
        #expect((try ash.get("/api/posts/\(kept)/children").json["children"] as? [Any])?.count == 1)
        // remove on a comment.
        let commentReport = try #require(open.first { ($0["target"] as? [String: Any])?["type"] as? String == "comment" }?["id"] as? Int)
        #expect(try mod.send("POST", "/api/moderation/reports/\(commentReport)/resolve", json: ["action": "remove"]).status == 200)
        #expect((try ash.get("/api/posts/\(kept)/comments").json["comments"] as? [Any])?.isEmpty == true)
        let resolved = try #require(try mod.get("/api/moderation/reports?status=resolved").json["reports"] as? [[String: Any]])
        #expect(resolved.count == 4)
        // A removed target is null, its id kept: the moderator can still tell which it was.
        let removed = try #require(resolved.first { ($0["target"] as? [String: Any])?["id"] as? Int == spam }?["target"] as? [String: Any])
        #expect(removed["type"] as? String == "post" && removed["post"] is NSNull)
        #expect(try mod.send("POST", "/api/moderation/reports/\(keptReport)/resolve", json: ["action": "explode"]).status == 422)

        let log = try #require(try mod.get("/api/moderation/log").json["entries"] as? [[String: Any]])
        #expect(log.map { $0["action"] as? String } == ["remove", "remove", "remove"])
        #expect(log.last?["note"] as? String == "ads" && (log.last?["moderator"] as? [String: Any])?["username"] as? String == "mod")
        #expect((log.last?["target"] as? [String: Any])?["type"] as? String == "post")
    }

    /// The queue and the log page by their own times. The reporter's and the moderator's
    /// profiles, joined beside them, carry a `created_at` too, which once became the
    /// answers' time and cursor: the queue answered its first page forever, the log lost
    /// what followed, and failed (500) once a moderator's account was gone.
    @Test func queueAndLog_pageByTheirOwnTimes_evenWithoutTheModerator() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let posts = try (0..<3).map { try ash.createPost("post \($0)").id }
        let blair = try APIClient.user("blair@example.com", on: app)
        for post in posts { #expect(try blair.send("POST", "/api/reports", json: ["post_id": post, "reason": "spam"]).status == 201) }
        let gone = try APIClient.moderator("gone@example.com", on: app)
        let mod = try APIClient.moderator("mod@example.com", on: app)
        func ids(_ path: String, _ member: String) throws -> [Int] {
            var ids: [Int] = [], cursor: String?
            repeat {
                let page = try mod.get(path + "limit=1" + (cursor.map { "&cursor=\($0)" } ?? ""))
                #expect(page.status == 200)
                ids += ((page.json[member] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? Int }
                cursor = page.json["next_cursor"] as? String
            } while cursor != nil && ids.count < 10
            return ids
        }
        let queue = try ids("/api/moderation/reports?", "reports")
        #expect(queue.count == 3 && Set(queue).count == 3)
        for (index, report) in queue.enumerated() {
            let moderator = index == 0 ? gone : mod
            #expect(try moderator.send("POST", "/api/moderation/reports/\(report)/resolve", json: ["action": "dismiss"]).status == 200)
        }
        #expect(try gone.send("DELETE", "/api/me").status == 200)
        let log = try ids("/api/moderation/log?", "entries")
        #expect(log.count == 3 && log == log.sorted(by: >))
        let oldest = (try mod.get("/api/moderation/log").json["entries"] as? [[String: Any]])?.last
        #expect(oldest?["moderator"] is NSNull && oldest?["created_at"] is String)
    }
}

extension APIClient {
    /// A trust-mode user made a moderator by the operator's command.
    static func moderator(_ email: String, on app: Application) throws -> APIClient {
        let client = try APIClient.user(email, on: app)
        _ = try client.get("/api/me")  // makes the account
        let change = try Roles.grant("moderator", toEmail: email, conninfo: try #require(app.configuration.directDatabaseURL))
        #expect(change?.previous == "user" && change?.now == "moderator")
        return client
    }
}
