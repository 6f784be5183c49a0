import Foundation
@testable import PostsClient
import Testing
// Swift Testing has a `Comment` too; this file means the model.
import struct PostsClient.Comment

/// Search and hashtags through the client, against the real server (API.md "Search and
/// hashtags"), and the new fields' decoding (present, null, absent).
@Suite struct ClientSearchTests {
    @Test func aTaggedPost_isFoundWithoutItsAccent_andCarriesItsTags() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let post = try await ash.createPost(NewPost(title: "#Café opens", summary: "s", body: "near the #harbour"))
        // Names come folded (API.md: `#Café`, `#CAFE` and `#cafe` are one tag); offsets name the text as written.
        #expect(post.tags == [Hashtag(name: "cafe", field: "title", start: 0, end: 6),
                              Hashtag(name: "harbour", field: "body", start: 9, end: 17)])
        #expect(post.tags.first.flatMap { $0.range(in: post.title) }.map { String(post.title[$0]) } == "#Café")
        _ = try await ash.createPost(NewPost(title: "unrelated", summary: "s", body: "b"))

        #expect(try await ash.search("cafe").collect().map(\.id) == [post.id])
        #expect(try await server.client().search("CAFÉ", sort: .recent).collect().map(\.id) == [post.id])
        #expect(try await ash.post(id: post.id).tags.map(\.name) == ["cafe", "harbour"])

        let comment = try await ash.addComment("so good 🎉 #Cafe", to: post.id)
        #expect(comment.tags == [Hashtag(name: "cafe", field: "body", start: 13, end: 18)])

        let empty = await #expect(throws: PostsAPIError.self) { try await ash.search("   ").collect() }
        #expect(empty?.code == .badRequest)
        let long = await #expect(throws: PostsAPIError.self) { try await ash.search(String(repeating: "a", count: 257)).collect() }
        #expect(long?.code == .badRequest)
    }

    @Test func searchPages_followTheCursor_untilItIsNil() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        var created: [Int] = []
        for index in 1...5 {
            created.append(try await ash.createPost(NewPost(title: "lighthouse \(index)", summary: "s", body: "b")).id)
        }

        var pages: [Page<Post>] = []
        for try await page in ash.search("lighthouse", sort: .recent, limit: 2).pages { pages.append(page) }
        #expect(pages.map(\.items.count) == [2, 2, 1])
        #expect(pages.map { $0.nextCursor == nil } == [false, false, true])
        #expect(pages.flatMap(\.items).map(\.id) == created.reversed())
        // By relevance (all alike here) every post still comes once.
        let byRelevance = try await ash.search("lighthouse", limit: 2).collect().map(\.id)
        #expect(byRelevance.count == 5 && Set(byRelevance) == Set(created))
    }

    @Test func people_areFoundByAUsernamePrefix() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let blair = try await server.signedIn("blair@example.com")
        let ashProfile = try await ash.updateProfile(ProfileUpdate(username: "ash_n", fullName: "Ash North"))
        _ = try await blair.updateProfile(ProfileUpdate(username: "blair", fullName: "Blair Ash"))

        // ash_n by its username's prefix, blair by a word of the full name; neither is exact,
        // followed or followed more, so both come, in no promised order.
        let found = try await blair.search("ash", type: .people).collect()
        #expect(Set(found.map(\.userID)) == [ashProfile.userID, try await blair.me().user.id])
        #expect(try await blair.search("ashh", type: .people).collect().map(\.userID).contains(ashProfile.userID))
        #expect(try await blair.search("zzzz", type: .people).collect().isEmpty)
    }

    @Test func tags_countTheirPosts_whateverTheSpelling() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let blair = try await server.signedIn("blair@example.com")
        let first = try await ash.createPost(NewPost(title: "#Café", summary: "s", body: "b"))
        let second = try await blair.createPost(NewPost(title: "t", summary: "#cafe again", body: "b"))
        let third = try await ash.createPost(NewPost(title: "t", summary: "s", body: "#CAFE #solo"))
        _ = try await ash.createPost(NewPost(title: "#solo", summary: "s", body: "b"))

        for spelling in ["CAFE", "Café", "cafe"] {
            #expect(try await ash.tag(spelling) == TagSummary(name: "cafe", postsCount: 3), "\(spelling)")
        }
        let unknown = await #expect(throws: PostsAPIError.self) { try await ash.tag("nothing_here") }
        #expect(unknown?.code == .notFound)
        // A name that is no tag must not change the route.
        let slashed = await #expect(throws: PostsAPIError.self) { try await ash.tag("a/posts") }
        #expect(slashed?.code == .notFound || slashed?.code == .badRequest)

        #expect(try await ash.tagPosts("Café", limit: 1).collect().map(\.id) == [third.id, second.id, first.id])
        var pageSizes: [Int] = []
        for try await page in ash.tagPosts("cafe", limit: 2).pages { pageSizes.append(page.items.count) }
        #expect(pageSizes == [2, 1])

        let tags = try await ash.search("caf", type: .tags).collect()
        #expect(tags.contains(TagSummary(name: "cafe", postsCount: 3)))

        // cafe: two people; solo: one person twice. Distinct authors rank, not posts.
        let trending = try await ash.trendingTags(limit: 10)
        #expect(trending.map(\.name) == ["cafe", "solo"])
        #expect(trending.first == TrendingTag(name: "cafe", postsCount: 3, authors24h: 2))
        #expect(trending.last?.authors24h == 1 && trending.last?.postsCount == 2)
        #expect(try await ash.trendingTags(limit: 1).map(\.name) == ["cafe"])

        // A tag named like the trending route is still a tag to `tag(_:)`.
        _ = try await ash.createPost(NewPost(title: "What is #trending", summary: "s", body: "b"))
        #expect(try await ash.tag("trending") == TagSummary(name: "trending", postsCount: 1))
    }

    @Test func tags_decode_andOldAnswersDecodeWithNone() throws {
        let post = ModelDecodingTests.post
        #expect(try ModelDecodingTests.decode(Post.self, post).tags == [])
        let withNull = post.replacingOccurrences(of: #""liked_by_me":true"#, with: #""liked_by_me":true,"tags":null"#)
        #expect(try ModelDecodingTests.decode(Post.self, withNull).tags == [])
        let tagged = post.replacingOccurrences(of: #""liked_by_me":true"#,
                                               with: #""liked_by_me":true,"tags":[{"name":"Café","field":"title","start":0,"end":6}]"#)
        #expect(try ModelDecodingTests.decode(Post.self, tagged).tags == [Hashtag(name: "Café", field: "title", start: 0, end: 6)])

        let profile = ModelDecodingTests.profile
        let comment = ##"{"id":"7d0b2c9e-0000-4000-8000-000000000001","post_id":12,"user_id":3,"body":"#x","created_at":"2026-11-20T14:05:00.000Z","profile":\##(profile)}"##
        #expect(try ModelDecodingTests.decode(Comment.self, comment).tags == [])
        let taggedComment = comment.replacingOccurrences(of: ##""body":"#x""##, with: ##""body":"#x","tags":[{"name":"x","field":"body","start":0,"end":2}]"##)
        #expect(try ModelDecodingTests.decode(Comment.self, taggedComment).tags == [Hashtag(name: "x", field: "body", start: 0, end: 2)])
    }

    @Test func searchPages_decodeWhicheverListTheTypeNames() throws {
        let tags = #"{"status":"success","tags":[{"name":"cafe","posts_count":3}],"next_cursor":"abc"}"#
        let page = try ModelDecodingTests.decode(SearchPageEnvelope<TagSummary>.self, tags)
        #expect(page.items == [TagSummary(name: "cafe", postsCount: 3)] && page.nextCursor == "abc")
        let profiles = #"{"status":"success","profiles":[\#(ModelDecodingTests.profile)],"next_cursor":null}"#
        let people = try ModelDecodingTests.decode(SearchPageEnvelope<Profile>.self, profiles)
        #expect(people.items.map(\.username) == ["ash"] && people.nextCursor == nil)
        #expect(throws: DecodingError.self) {
            try ModelDecodingTests.decode(SearchPageEnvelope<Post>.self, #"{"status":"success","next_cursor":null}"#)
        }
        let trending = #"{"status":"success","tags":[{"name":"cafe","posts_count":3,"authors_24h":2}]}"#
        #expect(try ModelDecodingTests.decode(TrendingTagsEnvelope.self, trending).tags == [TrendingTag(name: "cafe", postsCount: 3, authors24h: 2)])
    }

    @Test func tagNames_areOnePathSegment() throws {
        let base = URL(string: "http://example.com")!
        func url(_ name: String) throws -> String {
            try APIRequest("GET", "/api/tags/\(APIRequest.pathSegment(name))").url(baseURL: base).absoluteString
        }
        #expect(try url("cafe") == "http://example.com/api/tags/cafe")
        #expect(try url("Café") == "http://example.com/api/tags/Caf%C3%A9")
        #expect(try url("a/b?c#d%") == "http://example.com/api/tags/a%2Fb%3Fc%23d%25")
        #expect(try url("..") == "http://example.com/api/tags/%2E%2E")
        #expect(try url("東京") == "http://example.com/api/tags/%E6%9D%B1%E4%BA%AC")
    }
}
