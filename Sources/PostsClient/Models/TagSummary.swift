/// A tag as search and `PostsClient.tag(_:)` answer it: its folded name (`cafe` for
/// `#Café`) and how many posts carry it.
public struct TagSummary: Codable, Sendable, Equatable, Hashable, Identifiable {
    public let name: String
    public let postsCount: Int

    public var id: String { name }

    enum CodingKeys: String, CodingKey {
        case name
        case postsCount = "posts_count"
    }

    public init(name: String, postsCount: Int) {
        self.name = name
        self.postsCount = postsCount
    }
}

/// A tag of `PostsClient.trendingTags(limit:)`: ranked by how many different people used
/// it in the last 24 hours (`authors24h`), so that one account posting it a hundred times
/// does not make it trend.
public struct TrendingTag: Codable, Sendable, Equatable, Hashable, Identifiable {
    public let name: String
    public let postsCount: Int
    public let authors24h: Int

    public var id: String { name }

    enum CodingKeys: String, CodingKey {
        case name
        case postsCount = "posts_count"
        case authors24h = "authors_24h"
    }

    public init(name: String, postsCount: Int, authors24h: Int) {
        self.name = name
        self.postsCount = postsCount
        self.authors24h = authors24h
    }
}
