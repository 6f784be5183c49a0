import Dispatch
import Foundation
import Locking
import PostsServer
import Postgres
import Testing
import TestSupport

/// Comment likes end to end: idempotent like and unlike, exact counts under concurrency,
/// `liked_by_me`, blocks and suspensions, and the `comment.liked` change.
// One test at a time: each starts a server, and the whole run's thread count must stay
// under what `ServerConcurrencyTests` allows the process (it counts /proc/self's threads).
@Suite(.serialized) struct CommentLikeTests {
    @Test func likeAndUnlike_areIdempotent_andShowInTheComment() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let post = try ash.createPost().id
        let id = try #require(try ThreadTests.comment(ash, on: post, "like me")["id"] as? String)
        for _ in 0..<2 {
            let liked = try blair.send("PUT", "/api/comments/\(id)/like")
            #expect(liked.status == 200 && liked.json["liked"] as? Bool == true && liked.json["like_count"] as? Int == 1)
            #expect(liked.json["comment_id"] as? String == id)
        }
        let mine = try #require((try blair.get("/api/posts/\(post)/comments").json["comments"] as? [[String: Any]])?.first)
        #expect(mine["like_count"] as? Int == 1 && mine["liked_by_me"] as? Bool == true)
        let theirs = try #require((try ash.get("/api/posts/\(post)/comments").json["comments"] as? [[String: Any]])?.first)
        #expect(theirs["liked_by_me"] as? Bool == false)
        let anonymous = try #require((try APIClient(port: app.server.port).get("/api/posts/\(post)/comments").json["comments"] as? [[String: Any]])?.first)
        #expect(anonymous["liked_by_me"] == nil && anonymous["like_count"] as? Int == 1)
        for _ in 0..<2 {
            let unliked = try blair.send("DELETE", "/api/comments/\(id)/like")
            #expect(unliked.status == 200 && unliked.json["liked"] as? Bool == false && unliked.json["like_count"] as? Int == 0)
        }
        #expect(try blair.send("PUT", "/api/comments/\(UUID().uuidString)/like").status == 404)
        #expect(try blair.send("PUT", "/api/comments/nope/like").status == 404)
        #expect(try APIClient(port: app.server.port).send("PUT", "/api/comments/\(id)/like").status == 401)
    }

    @Test func twentyConcurrentLikes_countExactly() throws {
        let app = try TestApplication.start { $0.databasePoolSize = 6 }
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost().id
        let id = try #require(try ThreadTests.comment(ash, on: post, "popular")["id"] as? String)
        let answered = ParkingLock(0)
        // Twenty users, each liking twice at once: twenty rows, never forty.
        DispatchQueue.concurrentPerform(iterations: 40) { index in
            guard let response = try? APIClient.user("fan\(index % 20)@example.com", on: app).send("PUT", "/api/comments/\(id)/like"),
                  response.status == 200 else { return }
            answered.withLock { $0 += 1 }
        }
        #expect(answered.withLock { $0 } == 40)
        let row = try app.pool.withConnection { connection in
            try connection.query("""
                SELECT like_count, (SELECT count(*) FROM comment_likes WHERE comment_id = c.id) AS rows FROM comments c
                WHERE id = \(try #require(UUID(uuidString: id)))
                """).firstRow()
        }
        #expect(try row.decode("like_count", as: Int.self) == 20 && row.decode("rows", as: Int.self) == 20)
    }

    @Test func acrossABlock_likingIsForbidden_unlikingIsNot() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let carol = try APIClient.user("carol@example.com", on: app)
        let post = try carol.createPost().id
        let id = try #require(try ThreadTests.comment(ash, on: post, "ash's")["id"] as? String)
        #expect(try blair.send("PUT", "/api/comments/\(id)/like").status == 200)
        #expect(try ash.send("PUT", "/api/users/\(try blair.userID())/block").status == 200)
        let refused = try blair.send("PUT", "/api/comments/\(id)/like")
        #expect(refused.status == 403 && refused.json["error"] as? String == "forbidden")
        #expect(try blair.send("DELETE", "/api/comments/\(id)/like").status == 200)
        #expect(try blair.send("PUT", "/api/comments/\(id)/like").status == 403)
        // A reply to the blocked user's comment is refused too.
        #expect(try blair.send("POST", "/api/posts/\(post)/comments", json: ["body": "hey", "reply_to": id]).status == 403)
        #expect(try ash.send("DELETE", "/api/users/\(try blair.userID())/block").status == 200)
        #expect(try blair.send("PUT", "/api/comments/\(id)/like").status == 200)
    }

    @Test func aSuspendedAuthorsComment_is404() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let post = try blair.createPost().id
        let id = try #require(try ThreadTests.comment(ash, on: post, "soon hidden")["id"] as? String)
        let ashID = try ash.userID()
        try app.pool.withConnection { try $0.query("UPDATE profiles SET suspended = true WHERE user_id = \(Int64(ashID))") }
        #expect(try blair.send("PUT", "/api/comments/\(id)/like").status == 404)
        #expect(try blair.get("/api/comments/\(id)/replies").status == 404)
        #expect(try blair.send("POST", "/api/posts/\(post)/comments", json: ["body": "hey", "reply_to": id]).status == 404)
    }

    @Test func changes_recordCommentLiked_onlyWhenSomethingChanged() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let post = try ash.createPost().id
        let id = try #require(try ThreadTests.comment(ash, on: post, "x")["id"] as? String)
        let since = try #require(try ash.get("/api/changes").json["next_since"] as? String)
        _ = try blair.send("PUT", "/api/comments/\(id)/like")
        _ = try blair.send("PUT", "/api/comments/\(id)/like")
        _ = try blair.send("DELETE", "/api/comments/\(id)/like")
        let changes = try ThreadTests.changes(ash, since: since, count: 2, query: "&post_id=\(post)", typePrefix: "comment.liked")
        #expect(changes.map { $0["type"] as? String } == ["comment.liked", "comment.liked"])
        #expect(changes.map { $0["liked"] as? Bool } == [true, false])
        #expect(changes.map { $0["like_count"] as? Int } == [1, 0])
        #expect(changes.allSatisfy { $0["comment_id"] as? String == id && $0["post_id"] as? Int == post })
    }

    @Test func accountDeletion_withdrawsCommentLikesAndThreads_countsExact() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let post = try ash.createPost().id
        let ashTop = try #require(try ThreadTests.comment(ash, on: post, "ash top")["id"] as? String)
        let blairTop = try #require(try ThreadTests.comment(blair, on: post, "blair top")["id"] as? String)
        _ = try ThreadTests.comment(ash, on: post, "blair's reply under blair", replyTo: blairTop)
        _ = try ThreadTests.comment(blair, on: post, "blair under ash", replyTo: ashTop)
        _ = try ThreadTests.comment(blair, on: post, "blair again", replyTo: blairTop)
        #expect(try blair.send("PUT", "/api/comments/\(ashTop)/like").status == 200)
        #expect(try blair.send("PUT", "/api/comments/\(blairTop)/like").status == 200)
        let blairsPost = try blair.createPost("blair's own").id
        let onBlairs = try #require(try ThreadTests.comment(ash, on: blairsPost, "on blair's")["id"] as? String)
        #expect(try blair.send("PUT", "/api/comments/\(onBlairs)/like").status == 200)
        #expect(try ash.send("PUT", "/api/comments/\(blairTop)/like").status == 200)

        #expect(try blair.send("DELETE", "/api/me").status == 200)
        // ash's post stays with ash's top-level comment (blair's reply gone) alone.
        #expect(Self.commentBodies(try ash.get("/api/posts/\(post)/comments?all=true")) == ["ash top"])
        let top = try #require((try ash.get("/api/posts/\(post)/comments").json["comments"] as? [[String: Any]])?.first)
        #expect(top["reply_count"] as? Int == 0 && top["like_count"] as? Int == 0)
        try ThreadTests.checkCounts(post, app)
    }

    private static func commentBodies(_ response: RawHTTPClient.Response) -> [String] {
        ThreadTests.bodies(response, "comments")
    }
}
