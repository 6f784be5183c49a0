import Foundation

/// A post as the API sends it (API.md "Objects"; the firefly client's fields and the
/// counters). `imageURL` is a path on the server: resolve it with `PostsClient.imageURL(_:)`.
public struct Post: Codable, Sendable, Equatable, Hashable, Identifiable {
    public let id: Int
    public let userID: Int
    /// Nil for a root post.
    public let parentID: Int?
    public let title: String
    public let summary: String
    public let body: String
    /// `/uploads/<name>`, or nil when the post has no image. For a smaller copy, see
    /// `PostsClient.imageURL(_:width:)`.
    public let imageURL: String?
    /// The image's size in pixels as it displays (upright), so that a layout can keep its
    /// place before the image arrives. Nil without an image; nil too from servers older
    /// than image sizes, and for an image stored before them until the server has measured
    /// it (shortly after it starts; never if its file cannot be read).
    public let imageWidth: Int?
    public let imageHeight: Int?
    public let createdAt: Date
    /// An IANA name such as `Europe/Paris`.
    public let timezone: String
    public let locationTag: String?
    public let aiGenerated: Bool
    /// The author's profile username.
    public let authorName: String?
    public let childCount: Int
    public let likeCount: Int
    public let commentCount: Int
    /// Present only on answers to a signed-in request (never in changes).
    public let likedByMe: Bool?
    /// True for a tombstone: the post of a deleted account kept because others posted
    /// under it (title `[deleted]`, no text, no image). Nil from servers before it existed.
    public let deleted: Bool?
    /// The `@username`s of the title, summary and body that name someone. Nil from servers
    /// before mentions.
    public let mentions: [Mention]?
    /// The `#tags` of the title, summary and body, in order; empty from servers before
    /// tags (never nil, unlike `mentions`: no tag and no tags known look the same to a reader).
    public let tags: [Hashtag]

    /// Whether this is a tombstone (see `deleted`): show it as removed, offer no actions.
    public var isTombstone: Bool { deleted ?? false }

    enum CodingKeys: String, CodingKey {
        case id
        case userID = "user_id"
        case parentID = "parent_id"
        case title, summary, body
        case imageURL = "image_url"
        case imageWidth = "image_width"
        case imageHeight = "image_height"
        case createdAt = "created_at"
        case timezone
        case locationTag = "location_tag"
        case aiGenerated = "ai_generated"
        case authorName = "author_name"
        case childCount = "child_count"
        case likeCount = "like_count"
        case commentCount = "comment_count"
        case likedByMe = "liked_by_me"
        case deleted
        case mentions
        case tags
    }

    public init(id: Int, userID: Int, parentID: Int?, title: String, summary: String, body: String,
                imageURL: String?, imageWidth: Int? = nil, imageHeight: Int? = nil, createdAt: Date,
                timezone: String, locationTag: String?, aiGenerated: Bool, authorName: String?,
                childCount: Int, likeCount: Int, commentCount: Int, likedByMe: Bool?, deleted: Bool? = false,
                mentions: [Mention]? = [], tags: [Hashtag] = []) {
        self.id = id
        self.userID = userID
        self.parentID = parentID
        self.title = title
        self.summary = summary
        self.body = body
        self.imageURL = imageURL
        self.imageWidth = imageWidth
        self.imageHeight = imageHeight
        self.createdAt = createdAt
        self.timezone = timezone
        self.locationTag = locationTag
        self.aiGenerated = aiGenerated
        self.authorName = authorName
        self.childCount = childCount
        self.likeCount = likeCount
        self.commentCount = commentCount
        self.likedByMe = likedByMe
        self.deleted = deleted
        self.mentions = mentions
        self.tags = tags
    }

    /// Written out for `tags` alone: a server before tags sends none (or null), which is [].
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        userID = try container.decode(Int.self, forKey: .userID)
        parentID = try container.decodeIfPresent(Int.self, forKey: .parentID)
        title = try container.decode(String.self, forKey: .title)
        summary = try container.decode(String.self, forKey: .summary)
        body = try container.decode(String.self, forKey: .body)
        imageURL = try container.decodeIfPresent(String.self, forKey: .imageURL)
        imageWidth = try container.decodeIfPresent(Int.self, forKey: .imageWidth)
        imageHeight = try container.decodeIfPresent(Int.self, forKey: .imageHeight)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        timezone = try container.decode(String.self, forKey: .timezone)
        locationTag = try container.decodeIfPresent(String.self, forKey: .locationTag)
        aiGenerated = try container.decode(Bool.self, forKey: .aiGenerated)
        authorName = try container.decodeIfPresent(String.self, forKey: .authorName)
        childCount = try container.decode(Int.self, forKey: .childCount)
        likeCount = try container.decode(Int.self, forKey: .likeCount)
        commentCount = try container.decode(Int.self, forKey: .commentCount)
        likedByMe = try container.decodeIfPresent(Bool.self, forKey: .likedByMe)
        deleted = try container.decodeIfPresent(Bool.self, forKey: .deleted)
        mentions = try container.decodeIfPresent([Mention].self, forKey: .mentions)
        tags = try container.decodeIfPresent([Hashtag].self, forKey: .tags) ?? []
    }
}
