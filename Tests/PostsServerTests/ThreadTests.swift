import Dispatch
import Foundation
import Locking
import PostsServer
import Postgres
import Testing
import TestSupport

/// Threaded comments end to end: replies one level deep, the top-level list, the flat list
/// and the replies page, deletes with exact counts, and the changes they record.
// One test at a time: each starts a server, and the whole run's thread count must stay
// under what `ServerConcurrencyTests` allows the process (it counts /proc/self's threads).
@Suite(.serialized) struct ThreadTests {
    /// Comments a post as `client`, a reply when `replyTo` is set: the comment object.
    static func comment(_ client: APIClient, on post: Int, _ body: String, replyTo: String? = nil) throws -> [String: Any] {
        var fields: [String: Any?] = ["body": body]
        if let replyTo { fields["reply_to"] = replyTo }
        let response = try client.send("POST", "/api/posts/\(post)/comments", json: fields)
        #expect(response.status == 201, "\(response.text)")
        return try #require(response.json["comment"] as? [String: Any])
    }

    static func bodies(_ response: RawHTTPClient.Response, _ member: String) -> [String] {
        ((response.json[member] as? [[String: Any]]) ?? []).compactMap { $0["body"] as? String }
    }

    /// The comment changes after `since` (filtered by `query`), once `count` are readable:
    /// the feed hands out a change only once every transaction before it has ended.
    static func changes(_ client: APIClient, since: String, count: Int, query: String = "",
                        typePrefix: String = "comment.") throws -> [[String: Any]] {
        try eventuallyValue(timeout: .seconds(30)) { () throws -> [[String: Any]]? in
            // Only changes about comments: the position taken may precede the post's own.
            let changes = ((try client.get("/api/changes?since=\(since)\(query)").json["changes"] as? [[String: Any]]) ?? [])
                .filter { ($0["type"] as? String)?.hasPrefix(typePrefix) == true }
            return changes.count >= count ? changes : nil
        } ?? []
    }

    /// The post's count against its rows, and each top-level comment's against its replies.
    static func checkCounts(_ post: Int, _ app: Application) throws {
        try app.pool.withConnection { connection in
            let row = try connection.query("""
                SELECT comment_count, (SELECT count(*) FROM comments WHERE post_id = \(Int64(post))) AS rows,
                       (SELECT count(*) FROM comments t WHERE t.post_id = \(Int64(post))
                          AND t.reply_count <> (SELECT count(*) FROM comments r WHERE r.reply_to = t.id)) AS wrong_threads
                FROM posts WHERE id = \(Int64(post))
                """).firstRow()
            #expect(try row.decode("comment_count", as: Int.self) == row.decode("rows", as: Int.self))
            #expect(try row.decode("wrong_threads", as: Int.self) == 0)
        }
    }

    @Test func replies_areOneLevelDeep_andListedApart() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let post = try ash.createPost().id
        let first = try Self.comment(ash, on: post, "first")
        let firstID = try #require(first["id"] as? String)
        #expect(first["reply_to"] is NSNull && first["reply_count"] as? Int == 0 && first["like_count"] as? Int == 0)
        let reply = try Self.comment(blair, on: post, "a reply", replyTo: firstID)
        #expect(reply["reply_to"] as? String == firstID)
        // A reply to a reply attaches to the same top-level comment.
        let deeper = try Self.comment(ash, on: post, "a reply to the reply", replyTo: try #require(reply["id"] as? String))
        #expect(deeper["reply_to"] as? String == firstID)
        _ = try Self.comment(blair, on: post, "second")

        let anonymous = try APIClient(port: app.server.port)
        let top = try anonymous.get("/api/posts/\(post)/comments")
        #expect(Self.bodies(top, "comments") == ["first", "second"])
        #expect(top.json["count"] as? Int == 4)
        #expect((top.json["comments"] as? [[String: Any]])?.map { $0["reply_count"] as? Int } == [2, 0])
        let flat = try anonymous.get("/api/posts/\(post)/comments?all=true")
        #expect(Self.bodies(flat, "comments") == ["first", "a reply", "a reply to the reply", "second"])
        #expect(try anonymous.get("/api/posts/\(post)/comments?all=maybe").status == 400)
        let replies = try anonymous.get("/api/comments/\(firstID)/replies")
        #expect(Self.bodies(replies, "replies") == ["a reply", "a reply to the reply"])
        #expect(replies.json["reply_count"] as? Int == 2 && replies.json["comment_id"] as? String == firstID)
        #expect(replies.json["next_cursor"] is NSNull)
        #expect(try anonymous.get("/api/comments/\(UUID().uuidString)/replies").status == 404)
        #expect(try anonymous.get("/api/comments/not-a-uuid/replies").status == 404)
        #expect(try ash.post(post)?.int("comment_count") == 4)
        try Self.checkCounts(post, app)
    }

    @Test func replyTo_mustBeACommentOfTheSamePost() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost().id, other = try ash.createPost("other").id
        let elsewhere = try #require(try Self.comment(ash, on: other, "elsewhere")["id"] as? String)
        let path = "/api/posts/\(post)/comments"
        #expect(try ash.send("POST", path, json: ["body": "x", "reply_to": elsewhere]).status == 422)
        #expect(try ash.send("POST", path, json: ["body": "x", "reply_to": UUID().uuidString]).status == 404)
        #expect(try ash.send("POST", path, json: ["body": "x", "reply_to": "nope"]).status == 404)
        #expect(try ash.post(post)?.int("comment_count") == 0)
        #expect(try ash.post(other)?.int("comment_count") == 1)
    }

    @Test func repliesPage_walksByKeyset() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost().id
        let top = try #require(try Self.comment(ash, on: post, "top")["id"] as? String)
        for index in 1...7 { _ = try Self.comment(ash, on: post, "reply \(index)", replyTo: top) }
        var seen: [String] = []
        var cursor: String?
        repeat {
            let page = try ash.get("/api/comments/\(top)/replies?limit=3" + (cursor.map { "&cursor=\($0)" } ?? ""))
            #expect(page.status == 200)
            seen += Self.bodies(page, "replies")
            cursor = page.json["next_cursor"] as? String
        } while cursor != nil
        #expect(seen == (1...7).map { "reply \($0)" })
        // The top-level list is one comment, whatever the replies.
        #expect(Self.bodies(try ash.get("/api/posts/\(post)/comments?limit=1"), "comments") == ["top"])
    }

    @Test func deletingATopLevelComment_deletesItsReplies_andCountsStayExact() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let post = try ash.createPost().id
        let top = try #require(try Self.comment(ash, on: post, "top")["id"] as? String)
        let kept = try #require(try Self.comment(blair, on: post, "kept")["id"] as? String)
        let blairsReply = try #require(try Self.comment(blair, on: post, "r1", replyTo: top)["id"] as? String)
        _ = try Self.comment(ash, on: post, "r2", replyTo: top)
        _ = try Self.comment(ash, on: post, "k1", replyTo: kept)
        #expect(try ash.post(post)?.int("comment_count") == 5)

        // A reply's delete moves its thread's count.
        #expect(try blair.send("DELETE", "/api/comments/\(blairsReply)").status == 200)
        let thread = try ash.get("/api/posts/\(post)/comments").json["comments"] as? [[String: Any]]
        #expect(thread?.map { $0["reply_count"] as? Int } == [1, 1])
        #expect(try ash.post(post)?.int("comment_count") == 4)

        #expect(try ash.send("DELETE", "/api/comments/\(top)").status == 200)
        #expect(try ash.post(post)?.int("comment_count") == 2)
        #expect(Self.bodies(try ash.get("/api/posts/\(post)/comments?all=true"), "comments") == ["kept", "k1"])
        #expect(try ash.get("/api/comments/\(top)/replies").status == 404)
        try Self.checkCounts(post, app)
    }

    @Test func aModeratorsRemoval_ofATopLevelComment_takesItsReplies() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let post = try ash.createPost().id
        let rude = try #require(try Self.comment(blair, on: post, "rude")["id"] as? String)
        _ = try Self.comment(ash, on: post, "a reply", replyTo: rude)
        _ = try Self.comment(ash, on: post, "fine")
        let report = try ash.send("POST", "/api/reports", json: ["comment_id": rude, "reason": "harassment"])
        let reportID = try #require((report.json["report"] as? [String: Any])?["id"] as? Int)
        let mod = try APIClient.moderator("mod@example.com", on: app)
        #expect(try mod.send("POST", "/api/moderation/reports/\(reportID)/resolve", json: ["action": "remove"]).status == 200)
        #expect(Self.bodies(try ash.get("/api/posts/\(post)/comments?all=true"), "comments") == ["fine"])
        #expect(try ash.post(post)?.int("comment_count") == 1)
        try Self.checkCounts(post, app)
    }

    @Test func concurrentRepliesAndDelete_keepCountsExact() throws {
        let app = try TestApplication.start { $0.databasePoolSize = 6 }
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost().id
        let tops = try (0..<4).map { try #require(try Self.comment(ash, on: post, "top \($0)")["id"] as? String) }
        DispatchQueue.concurrentPerform(iterations: 24) { index in
            guard let client = try? APIClient.user("user\(index % 6)@example.com", on: app) else { return }
            if index == 12 {
                _ = try? ash.send("DELETE", "/api/comments/\(tops[0])")
            } else {
                _ = try? client.send("POST", "/api/posts/\(post)/comments", json: ["body": "r\(index)", "reply_to": tops[index % 4]])
            }
        }
        try Self.checkCounts(post, app)
    }

    @Test func changes_carryReplyToAndCommentDeletes() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost().id
        let since = try #require(try ash.get("/api/changes").json["next_since"] as? String)
        let top = try #require(try Self.comment(ash, on: post, "top")["id"] as? String)
        let reply = try #require(try Self.comment(ash, on: post, "reply", replyTo: top)["id"] as? String)
        #expect(try ash.send("DELETE", "/api/comments/\(reply)").status == 200)
        let changes = try Self.changes(ash, since: since, count: 3)
        try #require(changes.count == 3)
        #expect(changes.map { $0["type"] as? String } == ["comment.created", "comment.created", "comment.deleted"])
        #expect(changes[0]["reply_to"] is NSNull && changes[1]["reply_to"] as? String == top)
        #expect((changes[1]["comment"] as? [String: Any])?["reply_to"] as? String == top)
        #expect(changes[2]["comment_id"] as? String == reply && changes[2]["reply_to"] as? String == top)
        #expect(changes.map { $0["comment_count"] as? Int } == [1, 2, 1])
    }
}
