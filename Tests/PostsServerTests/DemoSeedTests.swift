import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// `POST /api/dev/seed` and the first-start demo of `posts-server dev`.
@Suite struct DemoSeedTests {
    static let posts = DemoSeed.rowsPerStatement + 500

    @Test func seedIfEmpty_runsOnceWithExactCounters() throws {
        let pool = ConnectionPool(ConnectionPool.Configuration(conninfo: try TestDatabase.makeDatabase(), size: 1))
        #expect(try DemoSeed(pool: pool, clock: ServerClock()).seedIfEmpty())
        #expect(try !DemoSeed(pool: pool, clock: ServerClock()).seedIfEmpty())
        #expect(try Self.counterMismatches(pool) == 0)
        let posts: Int = try pool.withConnection { try $0.query("SELECT count(*) AS n FROM posts").first!.decode("n") }
        #expect(posts >= 3)
    }

    /// More posts than one statement writes, so the counts in the changes must hold across
    /// statements too.
    @Test func seedRoute_answersCounts_andRecordsEveryRowAsAChange() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        // The seed is one request that writes thousands of rows: on a loaded CI machine (the
        // second pass, on the Dispatch poller, runs beside other builds) it took over 5 s.
        let client = try APIClient(port: app.server.port, timeout: .seconds(60))
        let since = try ChangeLogTests.position(client)
        let seeded = try client.send("POST", "/api/dev/seed", json: ["users": 4, "posts": Self.posts])
        #expect(seeded.status == 201, "\(seeded.text)")
        let json = seeded.json
        #expect(json["status"] as? String == "success")
        #expect(json["users"] as? Int == 4)
        #expect(json["posts"] as? Int == Self.posts)
        let likes = try #require(json["likes"] as? Int)
        let comments = try #require(json["comments"] as? Int)
        let commentLikes = try #require(json["comment_likes"] as? Int)
        let follows = try #require(json["follows"] as? Int)
        #expect(follows == 4 * DemoFollows.perUser)
        #expect(try Self.counterMismatches(app.pool) == 0)
        // Follows' counters and every follower's feed, posts included (their fan-out jobs).
        #expect(try app.feedsSettled())
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])

        // Replaying the changes gives the rows' counters: each change carried its own moment.
        let changes = try ChangeLogTests.changes(after: since, in: client, count: Self.posts + likes + comments + commentLikes + follows)
        #expect(changes.filter { $0["type"] as? String == "comment.liked" }.count == commentLikes)
        #expect(changes.contains { $0["type"] as? String == "comment.created" && $0["reply_to"] is String })
        #expect(changes.filter { $0["type"] as? String == "follow.changed" }.count == follows)
        #expect(changes.filter { $0["type"] as? String == "post.created" }.count == Self.posts)
        #expect(changes.filter { $0["type"] as? String == "like.changed" }.count == likes)
        #expect(changes.filter { $0["type"] as? String == "comment.created" }.count == comments)
        var likeCounts: [Int: Int] = [:], commentCounts: [Int: Int] = [:], childCounts: [Int: Int] = [:]
        for change in changes {
            let post = change["post_id"] as? Int ?? 0
            switch change["type"] as? String {
            case "like.changed": likeCounts[post] = change["like_count"] as? Int
            case "comment.created": commentCounts[post] = change["comment_count"] as? Int
            case "comment.liked": break
            case "post.created":
                if let parent = change["parent_id"] as? Int { childCounts[parent] = change["parent_child_count"] as? Int }
            case "follow.changed": break
            default: Issue.record("unexpected change \(change)")
            }
        }
        let rows = try app.pool.withConnection { try $0.query("SELECT id, child_count, like_count, comment_count FROM posts").rows }
        for row in rows {
            let id = Int(try row.decode("id", as: Int64.self))
            #expect(try row.decode("like_count", as: Int.self) == likeCounts[id, default: 0])
            #expect(try row.decode("comment_count", as: Int.self) == commentCounts[id, default: 0])
            #expect(try row.decode("child_count", as: Int.self) == childCounts[id, default: 0])
        }
        let roots = try client.get("/api/posts?parent_id=root&limit=100")
        #expect(roots.status == 200)
        #expect(((roots.json["posts"] as? [Any])?.count ?? 0) >= 10)

        // A second seed adds to the first: new usernames, no conflict.
        let again = try client.send("POST", "/api/dev/seed", json: ["users": 4, "posts": 1])
        #expect(again.status == 201, "\(again.text)")
    }

    @Test func seedRoute_withoutNewUsers_writesAsThoseThere_orRefusesWithNobody() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        #expect(try client.send("POST", "/api/dev/seed", json: ["users": 0, "posts": 5]).status == 409)
        #expect(try client.send("POST", "/api/dev/seed", json: ["users": 0, "posts": 0]).status == 201)
        #expect(try APIClient.user("ash@example.com", on: app).get("/api/me").status == 200)
        let ash: Int64 = try app.pool.withConnection { try $0.query("SELECT id FROM users").first!.decode("id") }
        let seeded = try client.send("POST", "/api/dev/seed", json: ["users": 0, "posts": 5])
        #expect(seeded.status == 201, "\(seeded.text)")
        #expect(seeded.json["users"] as? Int == 0)
        let authors: [Int64] = try app.pool.withConnection {
            try $0.query("SELECT DISTINCT user_id FROM posts").rows.map { try $0.decode("user_id") }
        }
        #expect(authors == [ash])
    }

    @Test func seedRoute_refusesBadCounts_andIsNotFoundInTokenMode() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        #expect(try client.send("POST", "/api/dev/seed", json: ["posts": 10_001]).status == 422)
        #expect(try client.send("POST", "/api/dev/seed", json: ["users": -1]).status == 422)
        #expect(try client.send("POST", "/api/dev/seed", json: ["users": "many"]).status == 400)
        let plain = try client.send("POST", "/api/dev/seed")
        #expect(plain.status == 201)
        #expect(plain.json["users"] as? Int == 10)
        #expect(plain.json["posts"] as? Int == 50)

        let token = try TestApplication.start { $0.authMode = .token }
        defer { token.stop() }
        #expect(try APIClient(port: token.server.port).send("POST", "/api/dev/seed").status == 404)
    }

    @Test func plan_parentsComeFirst_andNobodyLikesTwice() {
        var random = SystemRandomNumberGenerator()
        let plan = DemoPlan(users: 7, posts: 300, authors: 7, batch: "t3st", using: &random)
        #expect(plan.users.count == 7)
        #expect(Set(plan.users.map(\.username)).count == 7)
        #expect(plan.users.allSatisfy { (try? Username.validate($0.username)) != nil })
        #expect(plan.posts.count == 300)
        #expect(plan.posts.filter { $0.parent == nil }.count == 50)
        for (index, post) in plan.posts.enumerated() {
            if let parent = post.parent { #expect(parent < index) }
            #expect((0..<7).contains(post.author))
        }
        #expect(Set(plan.likes.map { "\($0.post)/\($0.user)" }).count == plan.likes.count)
        #expect(plan.comments.allSatisfy { (0..<300).contains($0.post) && (0..<7).contains($0.author) })
        // A reply answers an earlier top-level comment of its own post.
        for (index, comment) in plan.comments.enumerated() {
            guard let top = comment.replyTo else { continue }
            #expect(top < index && plan.comments[top].post == comment.post && plan.comments[top].replyTo == nil)
        }
        #expect(plan.comments.contains { $0.replyTo != nil })
        #expect(Set(plan.commentLikes.map { "\($0.comment)/\($0.user)" }).count == plan.commentLikes.count)
    }

    private static func counterMismatches(_ pool: ConnectionPool) throws -> Int {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT count(*) AS n FROM posts p
                WHERE child_count <> (SELECT count(*) FROM posts c WHERE c.parent_id = p.id)
                   OR like_count <> (SELECT count(*) FROM likes l WHERE l.post_id = p.id)
                   OR comment_count <> (SELECT count(*) FROM comments m WHERE m.post_id = p.id)
                   OR EXISTS (SELECT 1 FROM comments c WHERE c.post_id = p.id
                              AND (c.reply_count <> (SELECT count(*) FROM comments r WHERE r.reply_to = c.id)
                                   OR c.like_count <> (SELECT count(*) FROM comment_likes l WHERE l.comment_id = c.id)))
                """).first!.decode("n")
        }
    }
}
