import Foundation

/// Search and hashtags (API.md "Search and hashtags"). Listings are `PageSequence`s: iterate
/// them for the items, or their `pages` for the pages as the server sends them, each next
/// one fetched by its cursor when the loop gets there.
extension PostsClient {
    /// What to search: `.posts` (the default) gives `Post`s, `.people` `Profile`s and
    /// `.tags` `TagSummary`s, so that a result needs no casting.
    ///
    ///     for try await post in client.search("cafe") { … }
    ///     let people = try await client.search("ash", type: .people).collect()
    public struct SearchType<Item: Decodable & Sendable>: Sendable, Equatable {
        /// The `type` of the query.
        public let wireName: String

        init(_ wireName: String) { self.wireName = wireName }
    }

    /// In which order search answers: `.relevance` (the title weighs more than the summary,
    /// the summary more than the body, then the newest first) or `.recent` (newest first).
    public enum SearchSort: String, Sendable, Equatable {
        case relevance
        case recent
    }

    /// Posts, people or tags matching `query` (every word must occur; `"a phrase"`,
    /// `-word` and `or` as on the web), without blocked, muted or suspended authors.
    /// `limit` is the page size (1…100; nil: the server's, 50). A query that is empty or
    /// over 256 characters is `badRequest`, on the first page.
    public func search<Item>(_ query: String, type: SearchType<Item> = .posts, sort: SearchSort = .relevance,
                             limit: Int? = nil) -> PageSequence<Item> {
        let parameters = [("q", query), ("type", type.wireName), ("sort", sort.rawValue)]
        return pages(of: SearchPageEnvelope<Item>.self, "/api/search", query: parameters, pageSize: limit) {
            Page(items: $0.items, nextCursor: $0.nextCursor)
        }
    }

    /// A tag by any of its spellings (`Café`, `CAFE`, `cafe`), with its folded name and
    /// post count; `notFound` when no post carries it.
    public func tag(_ name: String) async throws -> TagSummary {
        // Sent as `#name` (`%23name`): the server takes a leading `#` off, and a tag named
        // `trending` would otherwise meet the route of the trending list.
        let segment = APIRequest.pathSegment(name.hasPrefix("#") ? name : "#" + name)
        return try await send(APIRequest("GET", "/api/tags/\(segment)"), as: TagEnvelope.self).tag
    }

    /// The posts carrying a tag, newest first.
    public func tagPosts(_ name: String, limit: Int? = nil) -> PageSequence<Post> {
        pages(of: PostsPageEnvelope.self, "/api/tags/\(APIRequest.pathSegment(name))/posts", pageSize: limit) {
            Page(items: $0.posts, nextCursor: $0.nextCursor)
        }
    }

    /// The tags used by the most different people in the last 24 hours, most first.
    /// `limit`: how many (1…100; nil: the server's default).
    public func trendingTags(limit: Int? = nil) async throws -> [TrendingTag] {
        let query = limit.map { [("limit", String($0))] } ?? []
        return try await send(APIRequest("GET", "/api/tags/trending", query: query), as: TrendingTagsEnvelope.self).tags
    }
}

extension PostsClient.SearchType where Item == Post {
    public static var posts: Self { Self("posts") }
}

extension PostsClient.SearchType where Item == Profile {
    public static var people: Self { Self("people") }
}

extension PostsClient.SearchType where Item == TagSummary {
    public static var tags: Self { Self("tags") }
}
