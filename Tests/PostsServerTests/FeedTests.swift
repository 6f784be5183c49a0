import Foundation
import PostsServer
import Testing
import TestSupport

/// The home feed end to end (API.md "Following"): whose posts it holds, its keyset walk,
/// and every way a post leaves it (unfollow, deletion, suspension, block, mute).
@Suite struct FeedTests {
    private static func ids(_ client: APIClient, limit: Int = 50) throws -> [Int] {
        try client.walk("/api/feed", "posts", limit: limit).compactMap { $0["id"] as? Int }
    }

    @Test func feed_holdsOwnAndFolloweesPostsOfAnyDepth_newestFirst_andNoOneElses() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let carol = try APIClient.user("carol@example.com", on: app)
        let blairID = try blair.userID()
        let before = try blair.createPost("blair before the follow").id
        let carols = try carol.createPost("carol's root").id
        #expect(try ash.follow(blairID).status == 200)
        let own = try ash.createPost("ash's own").id
        let reply = try blair.createPost("blair's reply under carol", parent: carols).id
        _ = try carol.createPost("carol again", parent: reply)
        #expect(try app.feedsSettled())
        let feed = try ash.get("/api/feed?limit=10")
        #expect(feed.status == 200 && feed.json["next_cursor"] is NSNull)
        let posts = feed.json["posts"] as? [[String: Any]] ?? []
        #expect(posts.compactMap { $0["id"] as? Int } == [reply, own, before])
        #expect(posts.allSatisfy { $0["liked_by_me"] as? Bool == false && $0["author_name"] is String })
        #expect(try APIClient(port: app.server.port).get("/api/feed").status == 401)
        #expect(try ash.get("/api/feed?limit=0").status == 400 && ash.get("/api/feed?cursor=nonsense").status == 400)
    }

    @Test func feed_walksByKeyset_withoutDuplicatesOrGaps_andSeesNewPosts() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let writers = try (0..<3).map { try APIClient.user("w\($0)@example.com", on: app) }
        for writer in writers { #expect(try ash.follow(try writer.userID()).status == 200) }
        var made: [Int] = []
        for round in 0..<6 {
            for writer in writers + [ash] { made.append(try writer.createPost("post \(round)").id) }
        }
        #expect(try app.feedsSettled())
        for limit in [1, 5, 7, 24, 100] { #expect(try Self.ids(ash, limit: limit) == made.reversed()) }
        // A page read, then a new post: the walk goes on where it stopped, the new one on top.
        let first = try ash.get("/api/feed?limit=5")
        let fresh = try writers[1].createPost("fresh").id
        #expect(try app.feedsSettled())
        let cursor = try #require(first.json["next_cursor"] as? String)
        let rest = try ash.walk("/api/feed", "posts", limit: 5, from: cursor).compactMap { $0["id"] as? Int }
        #expect(rest == Array(made.reversed().dropFirst(5)))
        #expect(try Self.ids(ash).first == fresh)
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])
    }

    @Test func feed_losesPosts_onUnfollowDeletionSuspensionBlockAndMute() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let names = ["gone", "deleter", "suspended", "blocker", "muted", "kept"]
        let users = try names.map { try APIClient.user("\($0)@example.com", on: app) }
        let ids = try users.map { try $0.userID() }
        for id in ids { #expect(try ash.follow(id).status == 200) }
        let posts = try users.map { try $0.createPost("by \($0.headers["X-User-Email"] ?? "")").id }
        let extra = try users[1].createPost("deleted later").id
        #expect(try app.feedsSettled())
        #expect(try Set(Self.ids(ash)) == Set(posts + [extra]))

        #expect(try ash.follow(ids[0], false).status == 200)
        #expect(try users[1].send("DELETE", "/api/posts/\(extra)").status == 200)
        let mod = try APIClient.moderator("mod@example.com", on: app)
        #expect(try mod.send("POST", "/api/moderation/users/\(ids[2])/suspend", json: [:]).status == 200)
        #expect(try users[3].send("PUT", "/api/users/\(try ash.userID())/block").status == 200)
        #expect(try ash.send("PUT", "/api/users/\(ids[4])/mute").status == 200)
        #expect(try Self.ids(ash, limit: 2) == [posts[5], posts[1]])
        // Unmuted and unsuspended, their posts come back (the rows stayed); unfollowed and
        // blocked ones do not (their rows went).
        #expect(try ash.send("DELETE", "/api/users/\(ids[4])/mute").status == 200)
        #expect(try mod.send("POST", "/api/moderation/users/\(ids[2])/unsuspend", json: [:]).status == 200)
        #expect(try Self.ids(ash) == [posts[5], posts[4], posts[2], posts[1]])
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])
    }

    /// Posts written while their author is followed and unfollowed at the same moment: each
    /// follower's feed ends up with exactly the author's posts if it follows, none if not
    /// (the fan-out and the follow's backfill never both miss a post, nor leave a stray).
    @Test func postsAndFollows_atTheSameMoment_leaveEveryFeedExact() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let star = try APIClient.user("star@example.com", on: app)
        let starID = try star.userID()
        let fans = try (0..<10).map { try APIClient.user("fan\($0)@example.com", on: app) }
        for fan in fans { _ = try fan.userID() }
        let writers = try (0..<4).map { _ in try APIClient.user("star@example.com", on: app) }
        DispatchQueue.concurrentPerform(iterations: 14) { index in
            if index < 4 {
                for round in 0..<6 { _ = try? writers[index].createPost("post \(index).\(round)") }
            } else {
                for round in 0..<4 { _ = try? fans[index - 4].follow(starID, round % 2 == 0 || index % 2 == 0) }
            }
        }
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])
        let profile = try star.profile(starID)
        #expect(profile["posts_count"] as? Int == 24 && profile["followers_count"] as? Int == 5)
    }
}
