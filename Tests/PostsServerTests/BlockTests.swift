import Foundation
import PostsServer
import Testing
import TestSupport

/// Blocks end to end (API.md "Safety"): the routes, two-way invisibility on every read path
/// this server has so far, interactions refused both ways and restored on unblock, and
/// anonymous reads untouched.
@Suite struct BlockTests {
    /// ash, blair and carol, each with a root post; ash's comment and like on carol's post,
    /// and ash's reply under it.
    private struct Scene {
        let app: Application
        let ash, blair, carol, anonymous: APIClient
        let ashID, blairID: Int
        let ashPost, blairPost, carolPost, ashReply: Int

        init() throws {
            app = try TestApplication.start()
            ash = try APIClient.user("ash@example.com", on: app)
            blair = try APIClient.user("blair@example.com", on: app)
            carol = try APIClient.user("carol@example.com", on: app)
            anonymous = try APIClient(port: app.server.port)
            ashPost = try ash.createPost("ash's").id
            blairPost = try blair.createPost("blair's").id
            carolPost = try carol.createPost("carol's").id
            ashReply = try ash.createPost("ash's reply", parent: carolPost).id
            ashID = try #require(try ash.post(ashPost)?.int("user_id"))
            blairID = try #require(try blair.post(blairPost)?.int("user_id"))
            #expect(try ash.send("POST", "/api/posts/\(carolPost)/comments", json: ["body": "ash was here"]).status == 201)
            #expect(try ash.send("PUT", "/api/posts/\(carolPost)/like").status == 200)
        }
    }

    private static func ids(_ response: RawHTTPClient.Response, _ member: String) -> [Int] {
        ((response.json[member] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? Int ?? $0["user_id"] as? Int }
    }

    @Test func blockAndUnblock_areIdempotent_andListed() throws {
        let scene = try Scene()
        defer { scene.app.stop() }
        let blair = scene.blair
        #expect(try blair.send("PUT", "/api/users/\(scene.blairID)/block").status == 422)
        #expect(try blair.send("PUT", "/api/users/999999/block").status == 404)
        #expect(try scene.anonymous.send("PUT", "/api/users/\(scene.ashID)/block").status == 401)
        for _ in 0..<2 {
            let blocked = try blair.send("PUT", "/api/users/\(scene.ashID)/block")
            #expect(blocked.status == 200 && blocked.json["blocked"] as? Bool == true && blocked.json["user_id"] as? Int == scene.ashID)
        }
        let listed = try blair.get("/api/me/blocks")
        #expect(Self.ids(listed, "profiles") == [scene.ashID] && listed.json.keys.contains("next_cursor"))
        for _ in 0..<2 {
            let unblocked = try blair.send("DELETE", "/api/users/\(scene.ashID)/block")
            #expect(unblocked.status == 200 && unblocked.json["blocked"] as? Bool == false)
        }
        #expect(Self.ids(try blair.get("/api/me/blocks"), "profiles").isEmpty)
    }

    @Test func aBlock_hidesBothWays_onEveryReadPath_butNotFromAnonymousReads() throws {
        let scene = try Scene()
        defer { scene.app.stop() }
        #expect(try scene.blair.send("PUT", "/api/users/\(scene.ashID)/block").status == 200)
        // Whoever blocked whom: blair and ash see nothing of each other.
        for (viewer, other, otherPost) in [(scene.blair, scene.ashID, scene.ashPost), (scene.ash, scene.blairID, scene.blairPost)] {
            let recent = try viewer.get("/api/posts/recent")
            #expect(!((recent.json["posts"] as? [[String: Any]]) ?? []).contains { $0["user_id"] as? Int == other })
            #expect(try viewer.get("/api/posts/\(otherPost)").status == 404)
            #expect(try viewer.get("/api/posts/\(otherPost)/children").status == 404)
            #expect(try viewer.get("/api/posts/\(otherPost)/comments").status == 404)
            #expect(try viewer.get("/api/posts/\(otherPost)/likes").status == 404)
            #expect(try viewer.get("/api/posts/\(otherPost)/ancestors").status == 404)
            #expect(Self.ids(try viewer.get("/api/posts?user_id=\(other)"), "posts").isEmpty)
            // Replies under the other's post, by anyone: not through ?parent_id= either.
            _ = try scene.carol.createPost("carol under", parent: otherPost)
            #expect(Self.ids(try viewer.get("/api/posts?parent_id=\(otherPost)"), "posts").isEmpty)
        }
        // Under carol's post: ash's reply, comment and like are gone for blair only.
        let blair = scene.blair
        #expect(!Self.ids(try blair.get("/api/posts/\(scene.carolPost)/children"), "children").contains(scene.ashReply))
        let comments = try blair.get("/api/posts/\(scene.carolPost)/comments")
        #expect((comments.json["comments"] as? [Any])?.isEmpty == true && comments.json["count"] as? Int == 1)
        let likes = try blair.get("/api/posts/\(scene.carolPost)/likes")
        #expect(Self.ids(likes, "profiles").isEmpty && likes.json["like_count"] as? Int == 1)
        // Ancestors: a chain through a hidden post leaves it out.
        let underReply = try scene.carol.createPost("carol under ash", parent: scene.ashReply).id
        let chain = Self.ids(try blair.get("/api/posts/\(underReply)/ancestors"), "ancestors")
        #expect(chain == [scene.carolPost])
        // Anonymous readers and third parties see everything, counters included.
        #expect(try scene.anonymous.get("/api/posts/\(scene.ashPost)").status == 200)
        #expect(Self.ids(try scene.carol.get("/api/posts/\(scene.carolPost)/children"), "children").contains(scene.ashReply))
        #expect(((try scene.anonymous.get("/api/posts/\(scene.carolPost)/comments")).json["comments"] as? [Any])?.count == 1)
    }

    @Test func interactions_areRefusedBothWays_andComeBackOnUnblock() throws {
        let scene = try Scene()
        defer { scene.app.stop() }
        #expect(try scene.ash.send("PUT", "/api/posts/\(scene.blairPost)/like").status == 200)
        #expect(try scene.blair.send("PUT", "/api/users/\(scene.ashID)/block").status == 200)
        for (actor, target) in [(scene.blair, scene.ashPost), (scene.ash, scene.blairPost)] {
            #expect(try actor.send("PUT", "/api/posts/\(target)/like").status == 403)
            #expect(try actor.send("POST", "/api/posts/\(target)/comments", json: ["body": "hi"]).status == 403)
            #expect(try actor.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b", "parent_id": target]).status == 403)
        }
        // Moving one's own post under the other's is posting under it.
        let mine = try scene.ash.createPost("to move").id
        #expect(try scene.ash.send("POST", "/api/posts/reparent", json: ["post_id": mine, "parent_id": scene.blairPost]).status == 403)
        #expect(try scene.blair.send("POST", "/api/posts/\(scene.ashPost)/like/toggle").status == 403)
        // A like given before the block may be taken back, by a toggle too.
        let toggled = try scene.ash.send("POST", "/api/posts/\(scene.blairPost)/like/toggle")
        #expect(toggled.status == 200 && toggled.json["liked"] as? Bool == false)
        #expect(try scene.blair.send("DELETE", "/api/users/\(scene.ashID)/block").status == 200)
        #expect(try scene.blair.send("PUT", "/api/posts/\(scene.ashPost)/like").status == 200)
        #expect(try scene.ash.send("POST", "/api/posts/\(scene.blairPost)/comments", json: ["body": "friends again"]).status == 201)
        #expect(try scene.blair.get("/api/posts/\(scene.ashPost)").status == 200)
    }

    @Test func aMute_hidesOneWayFromLists_only() throws {
        let scene = try Scene()
        defer { scene.app.stop() }
        let muted = try scene.blair.send("PUT", "/api/users/\(scene.ashID)/mute")
        #expect(muted.status == 200 && muted.json["muted"] as? Bool == true)
        #expect(Self.ids(try scene.blair.get("/api/me/mutes"), "profiles") == [scene.ashID])
        let recent = try scene.blair.get("/api/posts/recent")
        #expect(!((recent.json["posts"] as? [[String: Any]]) ?? []).contains { $0["user_id"] as? Int == scene.ashID })
        #expect((try scene.blair.get("/api/posts/\(scene.carolPost)/comments").json["comments"] as? [Any])?.isEmpty == true)
        // A single read still works, and the muted user notices nothing.
        #expect(try scene.blair.get("/api/posts/\(scene.ashPost)").status == 200)
        #expect(try scene.ash.send("PUT", "/api/posts/\(scene.blairPost)/like").status == 200)
        #expect(Self.ids(try scene.ash.get("/api/posts/recent"), "posts").contains(scene.blairPost))
        #expect(try scene.blair.send("DELETE", "/api/users/\(scene.ashID)/mute").json["muted"] as? Bool == false)
        #expect(Self.ids(try scene.blair.get("/api/posts/recent"), "posts").contains(scene.ashPost))
    }
}
