import Foundation
import Postgres
import PostsServer
import Testing
import TestSupport

/// Hashtags end to end: one tag for every spelling, UTF-8 offsets, counts kept exact by
/// every write and deletion, tag pages, comments' tags, and trending over a day.
// One test at a time: each starts a server (see MentionTests).
@Suite(.serialized) struct TagTests {
    private static func tags(_ object: [String: Any]?) -> [[String: Any]] {
        (object?["tags"] as? [[String: Any]]) ?? []
    }

    private static func postsCount(_ client: APIClient, _ name: String) throws -> Int? {
        (try client.get("/api/tags/\(name)").json["tag"] as? [String: Any])?["posts_count"] as? Int
    }

    private static func pageIDs(_ client: APIClient, _ path: String) throws -> [Int] {
        (try client.get(path).json["posts"] as? [[String: Any]] ?? []).map(\.id)
    }

    @Test func everySpelling_isOneTag_withUTF8Offsets() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let title = "🎉 #Café and #CAFE"
        let post = try ash.createPost(title, extra: ["summary": "#cafe, # alone, ##x, #a-b, C#, #1", "body": "#ＣＡＦÉ"])
        let tags = Self.tags(post)
        #expect(tags.map { $0["name"] as? String } == ["cafe", "cafe", "cafe", "a", "cafe"])
        #expect(tags.map { $0["field"] as? String } == ["title", "title", "summary", "summary", "body"])
        // Byte offsets: the emoji is four bytes, and "é" two.
        #expect(tags.first?["start"] as? Int == 5 && tags.first?["end"] as? Int == 11)
        #expect(Self.tags(try ash.post(post.id)).count == 5)
        #expect(try Self.postsCount(ash, "cafe") == 1)
        #expect(try Self.postsCount(ash, "Caf%C3%A9") == 1)
        #expect(try Self.postsCount(ash, "%23CAFE") == 1)
        #expect(try Self.postsCount(ash, "a") == 1)
        #expect(try ash.get("/api/tags/x").status == 404)
        #expect(try ash.get("/api/tags/x/posts").status == 404)
        let plain = try ash.createPost("No tags")
        #expect((plain["tags"] as? [Any])?.isEmpty == true)
    }

    @Test func postsCount_followsEditsDeletesAndTombstones() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let first = try ash.createPost("#run in the park").id
        let second = try ash.createPost("#run again", extra: ["body": "#swim"]).id
        #expect(try Self.postsCount(ash, "run") == 2 && Self.postsCount(ash, "swim") == 1)
        #expect(try Self.pageIDs(ash, "/api/tags/run/posts") == [second, first])
        // An edit of the title only keeps the body's tag.
        #expect(try ash.send("PATCH", "/api/posts/\(second)", json: ["title": "#bike instead"]).status == 200)
        #expect(try Self.postsCount(ash, "run") == 1 && Self.postsCount(ash, "bike") == 1 && Self.postsCount(ash, "swim") == 1)
        #expect(try ash.send("DELETE", "/api/posts/\(second)").status == 200)
        #expect(try Self.postsCount(ash, "bike") == 0 && Self.postsCount(ash, "swim") == 0)
        // A post kept as a tombstone (someone replied) loses its tags with its text.
        try blair.createPost("#reply below", parent: first)
        #expect(try ash.send("DELETE", "/api/me").status == 200)
        #expect(try Self.postsCount(blair, "run") == 0)
        #expect(try Self.pageIDs(blair, "/api/tags/run/posts") == [])
        #expect(try Self.postsCount(blair, "reply") == 1)
    }

    @Test func tagPages_pageNewestFirst_throughTheVisibilityPolicy() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let mine = try (1...5).map { try ash.createPost("#walk \($0)").id }
        let theirs = try blair.createPost("#walk too").id
        var seen: [Int] = []
        var cursor: String?
        repeat {
            let json = try ash.get("/api/tags/walk/posts?limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")).json
            seen += (json["posts"] as? [[String: Any]] ?? []).map(\.id)
            cursor = json["next_cursor"] as? String
        } while cursor != nil && seen.count < 10
        #expect(seen == [theirs] + mine.reversed())
        #expect(try ash.send("PUT", "/api/users/\(try blair.userID())/mute").status == 200)
        #expect(try Self.pageIDs(ash, "/api/tags/walk/posts") == mine.reversed())
        #expect(try ash.get("/api/tags/walk/posts?cursor=bad").status == 400)
    }

    @Test func comments_haveTags_andCountForTrending() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let post = try ash.createPost("A post").id
        let comment = try ThreadTests.comment(blair, on: post, "So #Fun, #fun")
        #expect(Self.tags(comment).map { $0["name"] as? String } == ["fun", "fun"])
        #expect(Self.tags(comment).first?["field"] as? String == "body")
        // A tag of comments only: no posts, one author.
        #expect(try Self.postsCount(ash, "fun") == 0)
        let trending = try ash.get("/api/tags/trending").json["tags"] as? [[String: Any]] ?? []
        #expect(trending.first?["name"] as? String == "fun" && trending.first?["authors_24h"] as? Int == 1)
    }

    /// Distinct authors in the last 24 hours, most first; a day later, nothing (the clock is
    /// the test's, advanced, never waited out).
    @Test func trending_countsDistinctAuthorsOverADay() throws {
        let clock = ServerClock()
        let app = try TestApplication.start(clock: clock)
        defer { app.stop() }
        let users = try (1...3).map { try APIClient.user("user\($0)@example.com", on: app) }
        for user in users { try user.createPost("#popular") }
        try users[0].createPost("#niche #niche")
        try users[0].createPost("#niche again")
        let names = { () throws -> [String] in
            (try users[0].get("/api/tags/trending").json["tags"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        }
        #expect(try names() == ["popular", "niche"])
        // Counted at most once a minute: a tag used since is not listed until the list is
        // counted again (here: the clock moved, which drops the kept list).
        for user in users { try user.createPost("#rising #rising2") }
        #expect(try names() == ["popular", "niche"])
        clock.advance(by: .seconds(61))
        let recounted = try names()
        #expect(Set(recounted.prefix(3)) == ["popular", "rising", "rising2"] && recounted.last == "niche", "\(recounted)")
        let first = try #require((try users[0].get("/api/tags/trending?limit=1").json["tags"] as? [[String: Any]])?.first)
        #expect(first["authors_24h"] as? Int == 3 && first["posts_count"] as? Int == 3)
        #expect(try users[0].get("/api/tags/trending?limit=0").status == 400)
        clock.advance(by: .seconds(24 * 3600 + 1))
        #expect(try names() == [])
    }

    @Test func theDemoSeed_makesTags_countedAsTheRoutesCountThem() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let seeded = try ash.send("POST", "/api/dev/seed", json: ["users": 5, "posts": 60])
        #expect(seeded.status == 201, "\(seeded.text)")
        let trending = try ash.get("/api/tags/trending?limit=100").json["tags"] as? [[String: Any]] ?? []
        #expect(!trending.isEmpty)
        let counted = trending.reduce(0) { $0 + ($1["posts_count"] as? Int ?? 0) }
        let tagged = (try ash.get("/api/posts/recent?limit=100").json["posts"] as? [[String: Any]] ?? [])
            .filter { !Self.tags($0).isEmpty }.count
        #expect(counted == tagged)
        let name = try #require(trending.first?["name"] as? String)
        #expect(try Self.pageIDs(ash, "/api/tags/\(name)/posts?limit=100").count == trending.first?["posts_count"] as? Int)
    }
}
