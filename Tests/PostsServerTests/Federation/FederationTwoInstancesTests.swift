import Foundation
@testable import PostsServer
import Testing
import TestSupport

/// API.md "Federation" between two instances of this server on loopback (two databases,
/// two `PUBLIC_URL`s): a follow, a post, a reply and a like crossing both ways, each
/// through the job queue, signed by one and checked by the other.
@Suite struct FederationTwoInstancesTests {
    static func username(_ client: APIClient) throws -> String {
        try #require((try client.get("/api/me").json["profile"] as? [String: Any])?["username"] as? String)
    }

    /// The remote account `acct` as `client`'s instance knows it: its profile.
    static func remote(_ acct: String, on client: APIClient) throws -> [String: Any] {
        let found = try client.get("/api/profiles/@\(acct)")
        #expect(found.status == 200, "\(found.text)")
        return try #require(found.json["profile"] as? [String: Any])
    }

    @Test func followPostReplyAndLike_crossBothWays() throws {
        let here = try FederatedInstance.start(), there = try FederatedInstance.start()
        defer { here.stop(); there.stop() }
        let ash = try APIClient.user("ash@example.com", on: here)
        let blair = try APIClient.user("blair@example.com", on: there)
        let ashName = try Self.username(ash), blairName = try Self.username(blair)
        let ashAcct = "\(ashName)@\(FederatedInstance.domain(of: here))"
        let blairAcct = "\(blairName)@\(FederatedInstance.domain(of: there))"

        // Blair finds Ash through WebFinger and follows: pending until Ash's server accepts.
        let ashThere = try Self.remote(ashAcct, on: blair)
        #expect(ashThere["acct"] as? String == ashAcct && ashThere["remote"] as? Bool == true)
        let ashThereID = try #require(ashThere["user_id"] as? Int)
        let asked = try blair.send("PUT", "/api/users/\(ashThereID)/follow")
        #expect(asked.status == 200 && asked.json["pending"] as? Bool == true && asked.json["following"] as? Bool == false, "\(asked.text)")
        #expect(try eventually { try blair.get("/api/profiles/\(ashThereID)").json["profile"].flatMap { $0 as? [String: Any] }?["followed_by_me"] as? Bool == true })
        let ashID = try ash.userID()
        #expect(try eventually { try ash.get("/api/profiles/\(ashID)").json["profile"].flatMap { $0 as? [String: Any] }?["followers_count"] as? Int == 1 })

        // Ash posts: it reaches Blair's feed there.
        let post = try ash.createPost("Hello fediverse #spring", extra: ["body": "From here"]).id
        let copy = try #require(try eventuallyValue(timeout: .seconds(30)) { () -> [String: Any]? in
            let feed = try blair.get("/api/feed").json["posts"] as? [[String: Any]] ?? []
            return feed.first { ($0["title"] as? String)?.contains("Hello fediverse") == true }
        })
        #expect((copy["body"] as? String)?.contains("From here") == true)
        let copyID = copy.id

        // Blair replies and likes there: both reach Ash's post here.
        #expect(try blair.send("POST", "/api/posts/\(copyID)/comments", json: ["body": "Welcome, Ash!"]).status == 201)
        #expect(try blair.send("PUT", "/api/posts/\(copyID)/like").status == 200)
        #expect(try eventually { try ash.post(post)?.int("like_count") == 1 && ash.post(post)?.int("comment_count") == 1 })
        let comments = try ash.get("/api/posts/\(post)/comments").json["comments"] as? [[String: Any]] ?? []
        #expect(comments.first?["body"] as? String == "Welcome, Ash!")
        let likers = try ash.get("/api/posts/\(post)/likes").json["profiles"] as? [[String: Any]] ?? []
        #expect(likers.first?["acct"] as? String == blairAcct && likers.first?["remote"] as? Bool == true)
        let notified = try ash.get("/api/notifications").json["notifications"] as? [[String: Any]] ?? []
        #expect(Set(notified.compactMap { $0["type"] as? String }).isSuperset(of: ["followed", "post.liked", "post.commented"]), "\(notified)")

        // The other way: Ash follows Blair, Blair posts, Ash replies and likes.
        let blairHereID = try #require(try Self.remote(blairAcct, on: ash)["user_id"] as? Int)
        #expect(try ash.send("PUT", "/api/users/\(blairHereID)/follow").json["pending"] as? Bool == true)
        let blairID = try blair.userID()
        #expect(try eventually { try blair.get("/api/profiles/\(blairID)").json["profile"].flatMap { $0 as? [String: Any] }?["followers_count"] as? Int == 1 })
        #expect(try eventually { try ash.send("PUT", "/api/users/\(blairHereID)/follow").json["pending"] == nil })
        let blairPost = try blair.createPost("Hi from there").id
        let blairCopy = try #require(try eventuallyValue(timeout: .seconds(30)) { () -> Int? in
            let feed = try ash.get("/api/feed").json["posts"] as? [[String: Any]] ?? []
            return feed.first { $0["title"] as? String == "Hi from there" }?.id
        })
        #expect(try ash.send("POST", "/api/posts/\(blairCopy)/comments", json: ["body": "Hi Blair"]).status == 201)
        #expect(try ash.send("PUT", "/api/posts/\(blairCopy)/like").status == 200)
        #expect(try eventually { try blair.post(blairPost)?.int("like_count") == 1 && blair.post(blairPost)?.int("comment_count") == 1 })

        // An unlike and a delete cross too.
        #expect(try ash.send("DELETE", "/api/posts/\(blairCopy)/like").status == 200)
        #expect(try eventually { try blair.post(blairPost)?.int("like_count") == 0 })
        #expect(try ash.send("DELETE", "/api/posts/\(post)").status == 200)
        #expect(try eventually { try blair.get("/api/posts/\(copyID)").status == 404 })
    }
}
