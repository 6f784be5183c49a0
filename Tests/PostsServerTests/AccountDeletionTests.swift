import Foundation
import Postgres
import PostsServer
import Testing
import TestSupport

/// `DELETE /api/me` end to end (API.md "Sessions and the account"): what goes, what stays
/// as a tombstone, counters, changes, files, and the same email signing up anew.
@Suite struct AccountDeletionTests {
    @Test func deletion_keepsTombstonesUnderOthersPosts_andTheCountsExact() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let ashID = try #require((try ash.get("/api/me").json["user"] as? [String: Any])?["id"] as? Int)
        let start = try ChangeLogTests.position(ash)

        let alone = try ash.createPost("alone")
        let aloneChild = try ash.createPost("alone's child", parent: alone.id)
        let shared = try ash.createPost("shared", extra: ["body": "for @blair"])
        let ashUnderShared = try ash.createPost("ash under shared", parent: shared.id)
        let blairUnderAsh = try blair.createPost("blair under ash", parent: ashUnderShared.id)
        let blairs = try blair.createPost("blair's")
        let ashUnderBlair = try ash.createPost("ash under blair", parent: blairs.id)
        #expect(try ash.send("PUT", "/api/posts/\(blairs.id)/like").status == 200)
        #expect(try ash.send("POST", "/api/posts/\(blairs.id)/comments", json: ["body": "mine"]).status == 201)
        #expect(try blair.send("POST", "/api/posts/\(blairs.id)/comments", json: ["body": "blair's own"]).status == 201)
        #expect(try blair.send("PUT", "/api/posts/\(shared.id)/like").status == 200)
        #expect(try blair.send("POST", "/api/posts/\(shared.id)/comments", json: ["body": "on ash's"]).status == 201)

        #expect(try ash.send("DELETE", "/api/me").status == 200)

        // Gone: every post of ash's with no one else's below, with its subtree.
        for id in [alone.id, aloneChild.id, ashUnderBlair.id] { #expect(try blair.get("/api/posts/\(id)").status == 404) }
        #expect(try blair.get("/api/profiles/\(ashID)").status == 404)
        // Tombstones: the two with blair's post below, emptied, owned by `deleted`.
        for (post, children) in [(shared, 1), (ashUnderShared, 1)] {
            let tombstone = try #require(try blair.post(post.id))
            #expect(tombstone["title"] as? String == "[deleted]" && tombstone["summary"] as? String == "")
            #expect(tombstone["body"] as? String == "" && tombstone["image_url"] is NSNull)
            // No mention left pointing into the emptied text.
            #expect((tombstone["mentions"] as? [Any])?.isEmpty == true)
            #expect(tombstone["deleted"] as? Bool == true && tombstone["author_name"] as? String == "deleted")
            #expect(tombstone["user_id"] as? Int != ashID && tombstone["child_count"] as? Int == children)
            #expect(tombstone["created_at"] as? String == post["created_at"] as? String)
        }
        #expect(try blair.post(shared.id)?["like_count"] as? Int == 1)
        #expect(try blair.post(shared.id)?["comment_count"] as? Int == 1)
        #expect(try blair.post(blairUnderAsh.id)?["parent_id"] as? Int == ashUnderShared.id)
        #expect(try blair.post(blairUnderAsh.id)?["deleted"] as? Bool == false)
        // Blair's post lost ash's child, like and comment.
        let after = try #require(try blair.post(blairs.id))
        #expect(after.int("child_count") == 0 && after.int("like_count") == 0 && after.int("comment_count") == 1)

        let changes = try ChangeLogTests.changes(after: start, in: blair, count: 19)
        let types = changes.suffix(7).map { $0["type"] as? String }
        #expect(types == ["like.changed", "comment.deleted", "post.updated", "post.updated", "post.deleted", "post.deleted",
                          "profile.deleted"])
        let deletions = changes.filter { $0["type"] as? String == "post.deleted" }.suffix(2)
        #expect(Set(deletions.map { Set($0["deleted_ids"] as? [Int] ?? []) })
                    == [[alone.id, aloneChild.id], [ashUnderBlair.id]])
        #expect(deletions.first { $0["post_id"] as? Int == ashUnderBlair.id }?["parent_child_count"] as? Int == 0)
        #expect(deletions.first { $0["post_id"] as? Int == alone.id }?.keys.contains("parent_child_count") == false)

        // The same email is a new user now.
        let again = try #require((try ash.get("/api/me").json["user"] as? [String: Any])?["id"] as? Int)
        #expect(again != ashID)
    }

    @Test func tombstones_refuseEditsLikesCommentsAndChildren_butNotAnUnlike() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let post = try ash.createPost("soon a tombstone")
        try blair.createPost("keeps it", parent: post.id)
        #expect(try blair.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        #expect(try ash.send("DELETE", "/api/me").status == 200)

        let refused: [(String, String, [String: Any?]?)] = [
            ("PATCH", "/api/posts/\(post.id)", ["title": "back"]),
            ("PUT", "/api/posts/\(post.id)/like", nil),
            ("POST", "/api/posts/\(post.id)/comments", ["body": "hello?"]),
            ("POST", "/api/posts", ["title": "t", "summary": "s", "body": "b", "parent_id": post.id]),
            ("DELETE", "/api/posts/\(post.id)", nil),
        ]
        for (method, path, json) in refused {
            let answer = try blair.send(method, path, json: json)
            #expect(answer.status == 410 && answer.json["error"] as? String == "gone", "\(method) \(path)")
        }
        let moved = try blair.createPost("to move")
        #expect(try blair.send("POST", "/api/posts/reparent", json: ["post_id": moved.id, "parent_id": post.id]).status == 410)
        #expect(try blair.send("POST", "/api/posts/\(post.id)/like/toggle").status == 200)
        #expect(try blair.post(post.id)?["like_count"] as? Int == 0)
        #expect(try blair.send("POST", "/api/posts/\(post.id)/like/toggle").status == 410)
    }

    @Test func deletion_removesTheAccountsImages() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        var form = MultipartBody()
        for (name, value) in [("title", "t"), ("summary", "s"), ("body", "b")] { form.field(name, value) }
        form.file("image", filename: "a.jpg", type: "image/jpeg", jpegBytes(size: 2000))
        let created = try ash.send("POST", "/api/posts", body: form.finished, contentType: MultipartBody.contentType)
        let post = try #require(created.json["post"] as? [String: Any])
        // Someone else's reply keeps the post as a tombstone: its image goes, and its size.
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try blair.send("POST", "/api/posts", json: ["title": "r", "summary": "s", "body": "b", "parent_id": post.id]).status == 201)
        let files = { ((try? FileManager.default.contentsOfDirectory(atPath: app.configuration.uploadDirectory)) ?? [])
            .filter { !$0.hasPrefix(".") } }
        #expect(files().count == 1)
        #expect(try ash.send("DELETE", "/api/me").status == 200)
        #expect(UploadFolder.waitUntil(app, holds: []).isEmpty, "deleted after the commit, by the storage deletion worker")
        let tombstone = try #require(try blair.post(post.id))
        #expect(tombstone["image_url"] is NSNull && tombstone["image_width"] is NSNull && tombstone["image_height"] is NSNull)
    }
}
