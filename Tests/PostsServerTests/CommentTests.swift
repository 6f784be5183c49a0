import Dispatch
import Foundation
import Locking
import PostsServer
import Testing
import TestSupport

/// Comments end to end: pages with profiles, length rules in Swift characters, author-only
/// deletes, exact counts under concurrency, and retries with Idempotency-Key.
@Suite struct CommentTests {
    @Test func comments_comeOldestFirstWithTheirAuthorsProfile() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost().id
        let blair = try APIClient.user("blair@example.com", on: app)
        let created = try blair.send("POST", "/api/posts/\(post)/comments", json: ["body": "  first!  "])
        #expect(created.status == 201)
        let comment = try #require(created.json["comment"] as? [String: Any])
        #expect((comment["id"] as? String)?.firstMatch(of: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/) != nil)
        #expect(comment["body"] as? String == "first!" && comment["post_id"] as? Int == post)
        #expect((comment["profile"] as? [String: Any])?["username"] as? String == "blair")
        for index in 2...5 { _ = try ash.send("POST", "/api/posts/\(post)/comments", json: ["body": "comment \(index)"]) }

        let client = try APIClient(port: app.server.port)
        let first = try client.get("/api/posts/\(post)/comments?limit=3")
        #expect(first.json["count"] as? Int == 5 && first.json["post_id"] as? Int == post)
        let page = try #require(first.json["comments"] as? [[String: Any]])
        #expect(page.map { $0["body"] as? String } == ["first!", "comment 2", "comment 3"])
        #expect(page.map { ($0["profile"] as? [String: Any])?["username"] as? String } == ["blair", "ash", "ash"])
        let cursor = try #require(first.json["next_cursor"] as? String)
        let rest = try client.get("/api/posts/\(post)/comments?limit=3&cursor=\(cursor)")
        #expect((rest.json["comments"] as? [[String: Any]])?.map { $0["body"] as? String } == ["comment 4", "comment 5"])
        #expect(rest.json["next_cursor"] is NSNull)
        #expect(try ash.post(post)?.int("comment_count") == 5)
        #expect(try client.get("/api/posts/999999/comments").status == 404)
        #expect(try ash.send("POST", "/api/posts/999999/comments", json: ["body": "x"]).status == 404)
        #expect(try client.send("POST", "/api/posts/\(post)/comments", json: ["body": "x"]).status == 401)
    }

    /// 2,200 characters as Swift counts them: a family emoji or an e with a combining accent
    /// is one character, however many scalars and bytes.
    @Test func lengthLimit_countsCharacters() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let path = "/api/posts/\(try ash.createPost().id)/comments"
        for unit in ["a", "👩‍👩‍👧", "e\u{301}", "🇵🇹"] {
            #expect(try ash.send("POST", path, json: ["body": String(repeating: unit, count: 2200)]).status == 201, "\(unit)")
            #expect(try ash.send("POST", path, json: ["body": String(repeating: unit, count: 2201)]).status == 422, "\(unit)")
        }
        #expect(try ash.send("POST", path, json: ["body": " \n\t "]).status == 422)
        #expect(try ash.send("POST", path, json: [:]).status == 422)
        #expect(try ash.send("POST", path, json: ["body": 7]).status == 400)
    }

    @Test func delete_isTheAuthorsAlone() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost().id
        let created = try ash.send("POST", "/api/posts/\(post)/comments", json: ["body": "mine"])
        let id = try #require((created.json["comment"] as? [String: Any])?["id"] as? String)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try blair.send("DELETE", "/api/comments/\(id)").status == 403)
        #expect(try ash.send("DELETE", "/api/comments/\(id)").status == 200)
        #expect(try ash.send("DELETE", "/api/comments/\(id)").status == 404)
        #expect(try ash.send("DELETE", "/api/comments/not-a-uuid").status == 404)
        #expect(try ash.send("DELETE", "/api/comments/\(UUID().uuidString)").status == 404)
        #expect(try ash.post(post)?.int("comment_count") == 0)
    }

    @Test func concurrentComments_keepTheCountExact() throws {
        let app = try TestApplication.start { $0.databasePoolSize = 6 }
        defer { app.stop() }
        let post = try APIClient.user("author@example.com", on: app).createPost().id
        let created = ParkingLock(0)
        DispatchQueue.concurrentPerform(iterations: 40) { index in
            guard let response = try? APIClient.user("user\(index % 8)@example.com", on: app)
                .send("POST", "/api/posts/\(post)/comments", json: ["body": "comment \(index)"]), response.status == 201
            else { return }
            created.withLock { $0 += 1 }
        }
        #expect(created.withLock { $0 } == 40)
        let row = try app.pool.withConnection { connection in
            try connection.query("""
                SELECT comment_count, (SELECT count(*) FROM comments WHERE post_id = \(Int64(post))) AS rows
                FROM posts WHERE id = \(Int64(post))
                """).first!
        }
        #expect(try row.decode("comment_count", as: Int.self) == 40)
        #expect(try row.decode("rows", as: Int.self) == 40)
    }

    @Test func retriedComment_withTheSameKey_isMadeOnce() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let path = "/api/posts/\(try ash.createPost().id)/comments"
        let first = try ash.send("POST", path, json: ["body": "once"], headers: ["Idempotency-Key": "c-1"])
        let again = try ash.send("POST", path, json: ["body": "once"], headers: ["Idempotency-Key": "c-1"])
        #expect(first.status == 201 && again.status == 201 && first.body == again.body)
        #expect(try ash.send("POST", path, json: ["body": "twice"], headers: ["Idempotency-Key": "c-1"]).status == 422)
        let comments: Int = try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM comments").first!.decode("n") }
        #expect(comments == 1)
    }
}
