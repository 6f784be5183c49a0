import Foundation
import PostsServer
import Testing
import TestSupport

/// Follows end to end (API.md "Following"): the routes and their refusals, the counters
/// kept exact on every path and under concurrency, the pages, `followed_by_me`, what a
/// block removes, and the `follow.changed` change.
@Suite struct FollowTests {
    @Test func follow_isIdempotent_andRefusesSelfUnknownAndBlocked() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let carol = try APIClient.user("carol@example.com", on: app)
        let (ashID, blairID, carolID) = (try ash.userID(), try blair.userID(), try carol.userID())
        for _ in 0..<2 {
            let followed = try ash.follow(blairID)
            #expect(followed.status == 200, "\(followed.text)")
            #expect(followed.json["user_id"] as? Int == blairID && followed.json["following"] as? Bool == true)
            #expect(followed.json["followers_count"] as? Int == 1)
        }
        for _ in 0..<2 {
            let unfollowed = try ash.follow(blairID, false)
            #expect(unfollowed.status == 200 && unfollowed.json["following"] as? Bool == false)
            #expect(unfollowed.json["followers_count"] as? Int == 0)
        }
        #expect(try ash.follow(ashID).status == 422)
        #expect(try ash.follow(999_999).status == 404)
        #expect(try ash.follow(999_999, false).status == 404)
        #expect(try APIClient(port: app.server.port).follow(blairID).status == 401)
        // Across a block, either way: 403; an unfollow stays allowed.
        #expect(try carol.send("PUT", "/api/users/\(ashID)/block").status == 200)
        #expect(try ash.follow(carolID).status == 403)
        #expect(try carol.follow(ashID).status == 403)
        #expect(try ash.follow(carolID, false).status == 200)
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])
    }

    @Test func counters_stayExact_underThirtyConcurrentFollowsAndUnfollows() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let star = try APIClient.user("star@example.com", on: app)
        let starID = try star.userID()
        _ = try star.createPost("a post to fan out")
        let fans = try (0..<30).map { try APIClient.user("fan\($0)@example.com", on: app) }
        let fanIDs = try fans.map { try $0.userID() }
        // Everyone follows the star and each other's neighbour at once; then the even ones
        // unfollow while the odd ones follow again.
        DispatchQueue.concurrentPerform(iterations: 30) { index in
            _ = try? fans[index].follow(starID)
            _ = try? fans[index].follow(fanIDs[(index + 1) % 30])
        }
        #expect(try star.profile(starID)["followers_count"] as? Int == 30)
        DispatchQueue.concurrentPerform(iterations: 30) { index in
            _ = try? fans[index].follow(starID, index % 2 == 1)
            _ = try? fans[index].follow(fanIDs[(index + 1) % 30], index % 3 != 0)
        }
        let profile = try star.profile(starID)
        #expect(profile["followers_count"] as? Int == 15 && profile["posts_count"] as? Int == 1)
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])
        let followers = try star.walk("/api/users/\(starID)/followers", "profiles", limit: 4)
        #expect(Set(followers.compactMap { $0["user_id"] as? Int }) == Set(fanIDs.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)))
    }

    @Test func pages_walkNewestFirst_showFollowedByMe_andLeaveOutBlockedAndMuted() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let ashID = try ash.userID()
        let others = try (0..<7).map { try APIClient.user("u\($0)@example.com", on: app) }
        let otherIDs = try others.map { try $0.userID() }
        for (client, _) in zip(others, otherIDs) { #expect(try client.follow(ashID).status == 200) }
        for id in otherIDs { #expect(try ash.follow(id).status == 200) }
        let followers = try ash.walk("/api/users/\(ashID)/followers", "profiles", limit: 3)
        #expect(followers.compactMap { $0["user_id"] as? Int } == otherIDs.reversed())
        let following = try ash.walk("/api/users/\(ashID)/following", "profiles", limit: 2)
        #expect(following.compactMap { $0["user_id"] as? Int } == otherIDs.reversed())
        #expect(following.allSatisfy { $0["followed_by_me"] as? Bool == true && $0["followers_count"] as? Int == 1 })
        // Anonymous: no followed_by_me; the counters are there.
        let anonymous = try APIClient(port: app.server.port)
        let page = try anonymous.get("/api/users/\(ashID)/following").json["profiles"] as? [[String: Any]] ?? []
        #expect(page.count == 7 && page.allSatisfy { $0["followed_by_me"] == nil && $0["following_count"] as? Int == 1 })
        let me = try ash.profile(ashID)
        #expect(me["followers_count"] as? Int == 7 && me["following_count"] as? Int == 7 && me["followed_by_me"] as? Bool == false)
        #expect(try others[0].profile(ashID)["followed_by_me"] as? Bool == true)
        // A muted user and a blocker are left out of the caller's pages.
        #expect(try ash.send("PUT", "/api/users/\(otherIDs[0])/mute").status == 200)
        #expect(try others[1].send("PUT", "/api/users/\(ashID)/block").status == 200)
        let seen = try ash.walk("/api/users/\(ashID)/followers", "profiles", limit: 50).compactMap { $0["user_id"] as? Int }
        #expect(seen == otherIDs.dropFirst(2).reversed())
        #expect(try ash.get("/api/users/999999/followers").status == 404)
    }

    @Test func aBlock_removesFollowsBothWays_withTheirFeedRowsAndCounts() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let (ashID, blairID) = (try ash.userID(), try blair.userID())
        _ = try ash.createPost("ash's")
        _ = try blair.createPost("blair's")
        #expect(try ash.follow(blairID).status == 200 && blair.follow(ashID).status == 200)
        #expect(try ash.walk("/api/feed", "posts", limit: 50).count == 2)
        #expect(try blair.send("PUT", "/api/users/\(ashID)/block").status == 200)
        for (client, id) in [(ash, ashID), (blair, blairID)] {
            let profile = try client.profile(id)
            #expect(profile["followers_count"] as? Int == 0 && profile["following_count"] as? Int == 0)
            #expect(try client.walk("/api/feed", "posts", limit: 50).count == 1)
        }
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])
        let rows: Int = try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM feed_entries").firstRow().decode("n") }
        #expect(rows == 0)
    }

    @Test func postsCount_followsCreateDeleteModeratorRemovalAndAccountDeletion() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let (ashID, blairID) = (try ash.userID(), try blair.userID())
        #expect(try blair.follow(ashID).status == 200 && ash.follow(blairID).status == 200)
        let root = try ash.createPost("root").id
        let child = try ash.createPost("child", parent: root).id
        _ = try ash.createPost("grandchild", parent: child)
        let spam = try ash.createPost("spam").id
        let blairs = try blair.createPost("blair under ash", parent: root).id
        #expect(try ash.profile(ashID)["posts_count"] as? Int == 4)
        #expect(try ash.send("DELETE", "/api/posts/\(child)").status == 200)
        #expect(try ash.profile(ashID)["posts_count"] as? Int == 2)
        #expect(try blair.send("POST", "/api/reports", json: ["post_id": spam, "reason": "spam"]).status == 201)
        let mod = try APIClient.moderator("mod@example.com", on: app)
        let report = try #require((try mod.get("/api/moderation/reports").json["reports"] as? [[String: Any]])?.first?["id"] as? Int)
        #expect(try mod.send("POST", "/api/moderation/reports/\(report)/resolve", json: ["action": "remove"]).status == 200)
        #expect(try ash.profile(ashID)["posts_count"] as? Int == 1)
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])
        // ash goes: the root stays as a tombstone (blair's reply is under it), the follows go.
        #expect(try ash.send("DELETE", "/api/me").status == 200)
        let profile = try blair.profile(blairID)
        #expect(profile["posts_count"] as? Int == 1 && profile["followers_count"] as? Int == 0 && profile["following_count"] as? Int == 0)
        #expect(try blair.post(blairs)?["parent_id"] as? Int == root)
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])
        #expect(try blair.walk("/api/feed", "posts", limit: 50).compactMap { $0["id"] as? Int } == [blairs])
    }

    @Test func follows_areRecordedAsChanges() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let (ashID, blairID) = (try ash.userID(), try blair.userID())
        let since = try ChangeLogTests.position(ash)
        #expect(try ash.follow(blairID).status == 200)
        #expect(try ash.follow(blairID).status == 200)  // no change: it already was
        #expect(try ash.follow(blairID, false).status == 200)
        let changes = try ChangeLogTests.changes(after: since, in: ash, count: 2)
        #expect(changes.map { $0["type"] as? String } == ["follow.changed", "follow.changed"])
        #expect(changes.map { $0["following"] as? Bool } == [true, false])
        #expect(changes.map { $0["followers_count"] as? Int } == [1, 0])
        let first = try #require(changes.first)
        #expect(first["user_id"] as? Int == ashID && first["follower_id"] as? Int == ashID && first["followee_id"] as? Int == blairID)
        #expect(first["following_count"] as? Int == 1 && first["post_id"] == nil && first["parent_id"] == nil)
    }
}
