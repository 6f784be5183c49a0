import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// Every write records exactly its change, in the same transaction; a no-op like and a
/// refused write record none.
@Suite struct ChangeLogTests {
    /// All changes after `since` that are deliverable now, walked page by page.
    static func changes(after since: String, in client: APIClient, query: String = "", limit: Int = 1000)
        throws -> (changes: [[String: Any]], next: String) {
        var all: [[String: Any]] = []
        var cursor = since
        while true {
            let page = try client.get("/api/changes?since=\(cursor)&limit=\(limit)\(query)")
            #expect(page.status == 200, "\(page.text)")
            all += page.json["changes"] as? [[String: Any]] ?? []
            cursor = try #require(page.json["next_since"] as? String)
            if page.json["has_more"] as? Bool != true { return (all, cursor) }
        }
    }

    /// The changes after `since` once `count` of them are deliverable. Delivery waits for
    /// the xmin horizon, which any transaction anywhere in the cluster holds back while it
    /// runs, and the tests share one cluster: a change may take a moment to pass it.
    static func changes(after since: String, in client: APIClient, query: String = "", limit: Int = 1000,
                        count: Int) throws -> [[String: Any]] {
        var found: [[String: Any]] = []
        _ = try eventually(timeout: .seconds(20)) {
            found = try changes(after: since, in: client, query: query, limit: limit).changes
            return found.count >= count
        }
        return found
    }

    static func position(_ client: APIClient) throws -> String {
        let start = try client.get("/api/changes")
        #expect((start.json["changes"] as? [Any])?.isEmpty == true && start.json["has_more"] as? Bool == false)
        return try #require(start.json["next_since"] as? String)
    }

    @Test func eachWrite_recordsItsChange_withTheStateAfterIt() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        _ = try ash.get("/api/me")
        _ = try blair.get("/api/me")
        let start = try Self.position(ash)

        let root = try ash.createPost("root")
        let child = try ash.createPost("child", parent: root.id)
        #expect(try ash.send("PATCH", "/api/posts/\(child.id)", json: ["title": "child, renamed"]).status == 200)
        let other = try ash.createPost("other root")
        #expect(try ash.send("POST", "/api/posts/reparent", json: ["post_id": child.id, "parent_id": other.id]).status == 200)
        #expect(try blair.send("PUT", "/api/posts/\(root.id)/like").status == 200)
        #expect(try blair.send("PUT", "/api/posts/\(root.id)/like").status == 200)       // no-op: no change
        #expect(try blair.send("DELETE", "/api/posts/\(root.id)/like").status == 200)
        #expect(try blair.send("DELETE", "/api/posts/\(root.id)/like").status == 200)    // no-op
        #expect(try blair.send("POST", "/api/posts/\(root.id)/like/toggle").status == 200)
        let comment = try blair.send("POST", "/api/posts/\(child.id)/comments", json: ["body": "nice"])
        let commentID = try #require((comment.json["comment"] as? [String: Any])?["id"] as? String)
        #expect(try blair.send("DELETE", "/api/comments/\(commentID)").status == 200)
        #expect(try blair.send("PATCH", "/api/profiles/me", json: ["bio": "hello"]).status == 200)
        // Refused writes record nothing.
        #expect(try blair.send("PATCH", "/api/posts/\(root.id)", json: ["title": "not mine"]).status == 403)
        #expect(try ash.send("POST", "/api/posts", json: ["title": "", "summary": "s", "body": "b"]).status == 422)
        #expect(try ash.send("POST", "/api/posts/999999/comments", json: ["body": "x"]).status == 404)
        #expect(try ash.send("DELETE", "/api/posts/\(other.id)").status == 200)

        let changes = try Self.changes(after: start, in: ash, count: 12)
        #expect(changes.map { $0["type"] as? String } == [
            "post.created", "post.created", "post.updated", "post.created", "post.updated", "like.changed", "like.changed",
            "like.changed", "comment.created", "comment.deleted", "profile.updated", "post.deleted",
        ])
        let ashID = root["user_id"] as! Int
        let blairID = try #require((try blair.get("/api/me").json["user"] as? [String: Any])?["id"] as? Int)
        #expect(changes.map { $0["user_id"] as? Int } == [ashID, ashID, ashID, ashID, ashID, blairID, blairID, blairID,
                                                          blairID, blairID, blairID, ashID])
        #expect(changes.allSatisfy { ($0["seq"] as? String)?.isEmpty == false && $0["at"] is String })

        // post.created: the post as GET shows it (author_name, counts), and the parent's count.
        let created = changes[1]
        #expect(created["post_id"] as? Int == child.id && created["parent_id"] as? Int == root.id)
        #expect(created["parent_child_count"] as? Int == 1)
        #expect(changes[0]["parent_child_count"] == nil && changes[0]["parent_id"] is NSNull)
        let createdPost = try #require(created["post"] as? [String: Any])
        for key in ["id", "user_id", "parent_id", "title", "summary", "body", "image_url", "created_at", "timezone",
                    "location_tag", "ai_generated", "author_name", "child_count", "like_count", "comment_count"] {
            #expect(createdPost.keys.contains(key), "\(key)")
        }
        #expect(createdPost["created_at"] as? String == child["created_at"] as? String)
        #expect(createdPost["author_name"] as? String == "ash")
        #expect((changes[2]["post"] as? [String: Any])?["title"] as? String == "child, renamed")
        // Reparent: the old parent, and the filters' view of it.
        #expect(changes[4]["old_parent_id"] as? Int == root.id && changes[4]["parent_id"] as? Int == other.id)
        #expect(changes[5]["liked"] as? Bool == true && changes[5]["like_count"] as? Int == 1)
        #expect(changes[6]["liked"] as? Bool == false && changes[6]["like_count"] as? Int == 0)
        #expect(changes[7]["liked"] as? Bool == true && changes[7]["post_id"] as? Int == root.id)
        #expect((changes[8]["comment"] as? [String: Any])?["id"] as? String == commentID)
        #expect(((changes[8]["comment"] as? [String: Any])?["profile"] as? [String: Any])?["username"] as? String == "blair")
        #expect(changes[8]["comment_count"] as? Int == 1 && changes[8]["parent_id"] as? Int == other.id)
        #expect(changes[9]["comment_id"] as? String == commentID && changes[9]["comment_count"] as? Int == 0)
        #expect((changes[10]["profile"] as? [String: Any])?["bio"] as? String == "hello")
        #expect(changes[10]["post_id"] == nil && changes[10]["parent_id"] == nil)
        #expect(Set(changes[11]["deleted_ids"] as? [Int] ?? []) == [other.id, child.id])
        #expect(changes[11]["parent_child_count"] == nil)
        // Never an email, a token or liked_by_me.
        let text = String(decoding: try JSONSerialization.data(withJSONObject: changes), as: UTF8.self)
        #expect(!text.contains("@example.com") && !text.contains("liked_by_me") && !text.contains("token"))
    }

    /// The objects a change carries are the ones the routes answer for the same rows.
    @Test func carriedObjects_equalTheRoutesAnswers() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let start = try Self.position(ash)
        let post = try ash.createPost("Tab\there \"quoted\" é 👩‍👩‍👧", extra: ["location_tag": "Lisboa", "timezone": "Asia/Tokyo"])
        let comment = try ash.send("POST", "/api/posts/\(post.id)/comments", json: ["body": "line\nbreak"]).json["comment"]
        let changes = try Self.changes(after: start, in: ash, count: 2)
        var fromChange = try #require(changes[0]["post"] as? [String: Any])
        var fromRoute = try #require(try APIClient(port: app.server.port).post(post.id))
        fromChange["comment_count"] = nil
        fromRoute["comment_count"] = nil
        #expect(NSDictionary(dictionary: fromChange) == NSDictionary(dictionary: fromRoute))
        let carried = try #require(changes[1]["comment"] as? [String: Any])
        #expect(NSDictionary(dictionary: carried) == NSDictionary(dictionary: try #require(comment as? [String: Any])))
    }
}
