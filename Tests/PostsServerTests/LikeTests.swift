import Dispatch
import Foundation
import PostsServer
import Synchronization
import Testing
import TestSupport

/// Likes end to end: idempotent like and unlike, atomic toggle, likers, and exact counts
/// under concurrency.
@Suite struct LikeTests {
    private static func state(_ response: RawHTTPClient.Response) -> (Bool?, Int?) {
        (response.json["liked"] as? Bool, response.json["like_count"] as? Int)
    }

    /// like_count of the post against the rows in likes.
    private static func counts(_ app: Application, _ post: Int) throws -> (stored: Int, rows: Int) {
        try app.pool.withConnection { connection in
            let row = try connection.query("""
                SELECT like_count, (SELECT count(*) FROM likes WHERE post_id = \(Int64(post))) AS rows
                FROM posts WHERE id = \(Int64(post))
                """).first!
            return (try row.decode("like_count"), try row.decode("rows"))
        }
    }

    @Test func likeUnlikeAndToggle_answerTheStateAndKeepTheCount() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost().id
        let path = "/api/posts/\(post)/like"
        let liked = try ash.send("PUT", path)
        #expect(liked.status == 200 && liked.json["post_id"] as? Int == post)
        #expect(Self.state(liked) == (true, 1))
        #expect(Self.state(try ash.send("PUT", path)) == (true, 1))
        #expect(try ash.post(post)?["liked_by_me"] as? Bool == true)
        #expect(Self.state(try ash.send("DELETE", path)) == (false, 0))
        #expect(Self.state(try ash.send("DELETE", path)) == (false, 0))
        #expect(Self.state(try ash.send("POST", path + "/toggle")) == (true, 1))
        #expect(Self.state(try ash.send("POST", path + "/toggle")) == (false, 0))
        #expect(try ash.send("PUT", "/api/posts/999999/like").status == 404)
        #expect(try ash.send("POST", "/api/posts/999999/like/toggle").status == 404)
        #expect(try APIClient(port: app.server.port).send("PUT", path).status == 401)
        #expect(try Self.counts(app, post) == (0, 0))
    }

    @Test func likers_areProfilesNewestLikeFirst_inPages() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let post = try APIClient.user("author@example.com", on: app).createPost().id
        for name in ["ash", "blair", "casey"] {
            #expect(try APIClient.user("\(name)@example.com", on: app).send("PUT", "/api/posts/\(post)/like").status == 200)
        }
        let client = try APIClient(port: app.server.port)
        let first = try client.get("/api/posts/\(post)/likes?limit=2")
        #expect(first.json["like_count"] as? Int == 3 && first.json["post_id"] as? Int == post)
        let profiles = try #require(first.json["profiles"] as? [[String: Any]])
        #expect(profiles.map { $0["username"] as? String } == ["casey", "blair"])
        #expect(profiles.allSatisfy { $0["user_id"] is Int && $0["created_at"] is String && $0.keys.contains("avatar_url") })
        let cursor = try #require(first.json["next_cursor"] as? String)
        let second = try client.get("/api/posts/\(post)/likes?limit=2&cursor=\(cursor)")
        #expect((second.json["profiles"] as? [[String: Any]])?.map { $0["username"] as? String } == ["ash"])
        #expect(second.json["next_cursor"] is NSNull)
        let none = try client.get("/api/posts/\(try APIClient.user("ash@example.com", on: app).createPost().id)/likes")
        #expect(none.status == 200 && (none.json["profiles"] as? [Any])?.isEmpty == true && none.json["like_count"] as? Int == 0)
        #expect(try client.get("/api/posts/999999/likes").status == 404)
    }

    /// Fifty users liking at once, then one user toggling fifty times at once, then ten
    /// users toggling five times each at once: like_count always equals the rows, and no
    /// request fails on a lock or a conflict.
    @Test func concurrentLikesAndToggles_keepTheCountEqualToTheRows() throws {
        let app = try TestApplication.start { $0.databasePoolSize = 6 }
        defer { app.stop() }
        let post = try APIClient.user("author@example.com", on: app).createPost().id
        let failures = Mutex<[Int]>([])
        func storm(_ count: Int, _ request: @Sendable (Int) -> (String, String, String)) {
            DispatchQueue.concurrentPerform(iterations: count) { index in
                let (email, method, path) = request(index)
                let status = (try? APIClient.user(email, on: app).send(method, path).status) ?? -1
                if status != 200 { failures.withLock { $0.append(status) } }
            }
        }
        storm(50) { ("user\($0)@example.com", "PUT", "/api/posts/\(post)/like") }
        #expect(try Self.counts(app, post) == (50, 50))
        storm(50) { _ in ("user0@example.com", "POST", "/api/posts/\(post)/like/toggle") }
        let afterOne = try Self.counts(app, post)
        #expect(afterOne.stored == afterOne.rows && (49...50).contains(afterOne.rows))
        storm(50) { ("user\($0 % 10)@example.com", "POST", "/api/posts/\(post)/like/toggle") }
        let afterAll = try Self.counts(app, post)
        #expect(afterAll.stored == afterAll.rows)
        #expect(failures.withLock { $0 } == [])
    }
}
