import Dispatch
import Foundation
import Locking
import PostsServer
import Testing
import TestSupport

/// Creating, changing, deleting and moving posts, counters kept exact throughout.
@Suite struct PostWriteTests {
    @Test func invalidPosts_areRefusedWithTheirStatus() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let cases: [([String: Any?], Int)] = [
            (["title": "", "summary": "s", "body": "b"], 422),
            (["title": "   ", "summary": "s", "body": "b"], 422),
            (["title": String(repeating: "t", count: 201), "summary": "s", "body": "b"], 422),
            (["title": "t", "summary": String(repeating: "s", count: 501), "body": "b"], 422),
            (["title": "t", "summary": "s", "body": String(repeating: "b", count: 20_001)], 422),
            (["title": "t", "summary": "s"], 422),
            (["title": "t", "summary": "s", "body": "b", "timezone": "Mars/Olympus"], 422),
            (["title": "t", "summary": "s", "body": "b", "parent_id": 999_999], 404),
            (["title": "t", "summary": "s", "body": "b", "parent_id": "abc"], 400),
            (["title": 5, "summary": "s", "body": "b"], 400),
            (["title": "t", "summary": "s", "body": "b", "ai_generated": "yes"], 400),
        ]
        for (fields, status) in cases {
            let response = try ash.send("POST", "/api/posts", json: fields)
            #expect(response.status == status, "\(fields.mapValues { "\($0 ?? "nil")".prefix(20) })")
        }
        // At the limits exactly, counted in characters after trimming.
        let edge = try ash.send("POST", "/api/posts", json: ["title": " " + String(repeating: "🇵🇹", count: 200) + " ",
                                                              "summary": "s", "body": String(repeating: "é", count: 20_000)])
        #expect(edge.status == 201)
        let anonymous = try APIClient(port: app.server.port)
        #expect(try anonymous.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b"]).status == 401)
        let count: Int = try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM posts").first!.decode("n") }
        #expect(count == 1)
    }

    @Test func patch_changesWhatItNames_forTheAuthorOnly() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost("before", extra: ["location_tag": "Lisbon"])
        let patched = try ash.send("PATCH", "/api/posts/\(post.id)", json: ["title": "after", "location_tag": nil])
        #expect(patched.status == 200, "\(patched.text)")
        let changed = try #require(patched.json["post"] as? [String: Any])
        #expect(changed["title"] as? String == "after" && changed["summary"] as? String == "A summary")
        #expect(changed["location_tag"] is NSNull)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try blair.send("PATCH", "/api/posts/\(post.id)", json: ["title": "mine now"]).status == 403)
        #expect(try ash.send("PATCH", "/api/posts/999999", json: ["title": "x"]).status == 404)
        #expect(try ash.send("PATCH", "/api/posts/\(post.id)", json: ["title": ""]).status == 422)
        // Firefly's form variant.
        let form = try ash.send("POST", "/api/posts/update", body: Array("post_id=\(post.id)&summary=via+form".utf8),
                                contentType: "application/x-www-form-urlencoded")
        #expect((form.json["post"] as? [String: Any])?["summary"] as? String == "via form")
        #expect(try ash.send("POST", "/api/posts/update", json: ["title": "no id"]).status == 422)
    }

    @Test func delete_removesTheSubtreeWithItsLikesAndComments_andFixesTheParentsCount() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let root = try ash.createPost("root")
        let doomed = try ash.createPost("doomed", parent: root.id)
        let below = try ash.createPost("below", parent: doomed.id)
        _ = try ash.createPost("deeper", parent: below.id)
        let kept = try ash.createPost("kept", parent: root.id)
        try app.pool.withConnection { connection in
            let user = root["user_id"] as! Int
            _ = try connection.query("INSERT INTO likes (post_id, user_id) VALUES (\(below.id), \(user)), (\(kept.id), \(user))")
            _ = try connection.query("INSERT INTO comments (post_id, user_id, body) VALUES (\(below.id), \(user), 'gone')")
        }
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try blair.send("DELETE", "/api/posts/\(doomed.id)").status == 403)
        let deleted = try ash.send("DELETE", "/api/posts/\(doomed.id)")
        #expect(deleted.status == 200 && deleted.text == #"{"status":"success"}"#)
        #expect(try ash.post(root.id)?.int("child_count") == 1)
        #expect(try ash.get("/api/posts/\(below.id)").status == 404)
        #expect(try ash.send("DELETE", "/api/posts/\(doomed.id)").status == 404)
        try app.pool.withConnection { connection in
            let left = try connection.query("""
                SELECT (SELECT count(*) FROM posts) AS posts, (SELECT count(*) FROM likes) AS likes,
                       (SELECT count(*) FROM comments) AS comments
                """).first!
            #expect(try left.decode("posts", as: Int.self) == 2)
            #expect(try left.decode("likes", as: Int.self) == 1)
            #expect(try left.decode("comments", as: Int.self) == 0)
        }
    }

    @Test func reparent_movesTheSubtree_keepsCounts_andRefusesCycles() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let first = try ash.createPost("first")
        let second = try ash.createPost("second")
        let child = try ash.createPost("child", parent: first.id)
        let grandchild = try ash.createPost("grandchild", parent: child.id)

        let moved = try ash.send("POST", "/api/posts/reparent", json: ["post_id": child.id, "parent_id": second.id])
        #expect(moved.status == 200, "\(moved.text)")
        #expect((moved.json["post"] as? [String: Any])?["parent_id"] as? Int == second.id)
        #expect(try ash.post(first.id)?.int("child_count") == 0)
        #expect(try ash.post(second.id)?.int("child_count") == 1)
        let way = try ash.get("/api/posts/\(grandchild.id)/ancestors").json["ancestors"] as? [[String: Any]]
        #expect(way?.map(\.id) == [second.id, child.id])

        for parent in [child.id, grandchild.id] {
            let cycle = try ash.send("POST", "/api/posts/reparent", json: ["post_id": child.id, "parent_id": parent])
            #expect(cycle.status == 409)
            #expect(cycle.json["error"] as? String == "conflict")
        }
        let toRoot = try ash.send("POST", "/api/posts/reparent", json: ["post_id": child.id, "parent_id": nil])
        #expect((toRoot.json["post"] as? [String: Any])?["parent_id"] is NSNull)
        #expect(try ash.post(second.id)?.int("child_count") == 0)
        #expect(try ash.send("POST", "/api/posts/reparent", json: ["post_id": child.id, "parent_id": 999_999]).status == 404)
        #expect(try ash.send("POST", "/api/posts/reparent", json: ["post_id": child.id]).status == 422)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try blair.send("POST", "/api/posts/reparent", json: ["post_id": child.id, "parent_id": nil]).status == 403)
    }

    /// Two opposite moves at once (A under B, B under A) never both succeed: no cycle, ever.
    @Test func concurrentOppositeReparents_neverLeaveACycle() throws {
        let app = try TestApplication.start { $0.databasePoolSize = 4 }
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let port = app.server.port
        for _ in 0..<15 {
            let a = try ash.createPost("a").id
            let b = try ash.createPost("b").id
            let statuses = ParkingLock<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                let (post, parent) = index == 0 ? (a, b) : (b, a)
                let client = try? APIClient.user("ash@example.com", on: app)
                let status = (try? client?.send("POST", "/api/posts/reparent", json: ["post_id": post, "parent_id": parent]))??.status
                statuses.withLock { $0.append(status ?? -1) }
            }
            #expect(statuses.withLock { $0 }.sorted() == [200, 409])
        }
        _ = port
        let cyclic: Int = try app.pool.withConnection { connection in
            try connection.query("""
                WITH RECURSIVE up(start, id, depth) AS (
                    SELECT id, parent_id, 1 FROM posts WHERE parent_id IS NOT NULL
                    UNION ALL
                    SELECT up.start, p.parent_id, up.depth + 1 FROM up JOIN posts p ON p.id = up.id
                    WHERE p.parent_id IS NOT NULL AND up.depth < 100
                )
                SELECT count(*) AS n FROM up WHERE id = start OR depth >= 100
                """).first!.decode("n")
        }
        #expect(cyclic == 0)
    }

    /// Fifty creates under one parent at once leave its child_count at fifty.
    @Test func concurrentCreates_keepChildCountExact() throws {
        let app = try TestApplication.start { $0.databasePoolSize = 6 }
        defer { app.stop() }
        let parent = try APIClient.user("ash@example.com", on: app).createPost("parent").id
        let created = ParkingLock(0)
        DispatchQueue.concurrentPerform(iterations: 50) { index in
            guard let client = try? APIClient.user("user\(index % 10)@example.com", on: app),
                  let response = try? client.send("POST", "/api/posts", json: ["title": "t\(index)", "summary": "s", "body": "b",
                                                                               "parent_id": parent]),
                  response.status == 201 else { return }
            created.withLock { $0 += 1 }
        }
        #expect(created.withLock { $0 } == 50)
        let counts = try app.pool.withConnection { connection in
            try connection.query("""
                SELECT child_count, (SELECT count(*) FROM posts c WHERE c.parent_id = p.id) AS actual FROM posts p WHERE id = \(Int64(parent))
                """).first!
        }
        #expect(try counts.decode("child_count", as: Int.self) == 50)
        #expect(try counts.decode("actual", as: Int.self) == 50)
    }
}
