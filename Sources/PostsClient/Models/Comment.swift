import Foundation

/// A comment on a post, with its author's whole profile (API.md "Objects"). The thread
/// and like fields are nil from servers before threads.
public struct Comment: Codable, Sendable, Equatable, Hashable, Identifiable {
    public let id: UUID
    public let postID: Int
    public let userID: Int
    public let body: String
    public let createdAt: Date
    public let profile: Profile
    /// The top-level comment this one replies to; nil for a top-level comment.
    public let replyTo: UUID?
    /// A top-level comment's replies (a reply has none).
    public let replyCount: Int?
    public let likeCount: Int?
    /// Present only on answers to a signed-in request (never in changes).
    public let likedByMe: Bool?
    public let mentions: [Mention]?
    /// The `#tags` of the body, in order (`field` is `body`); empty from servers before tags.
    public let tags: [Hashtag]

    /// Whether this comment answers another one.
    public var isReply: Bool { replyTo != nil }

    enum CodingKeys: String, CodingKey {
        case id
        case postID = "post_id"
        case userID = "user_id"
        case body
        case createdAt = "created_at"
        case profile
        case replyTo = "reply_to"
        case replyCount = "reply_count"
        case likeCount = "like_count"
        case likedByMe = "liked_by_me"
        case mentions
        case tags
    }

    public init(id: UUID, postID: Int, userID: Int, body: String, createdAt: Date, profile: Profile,
                replyTo: UUID? = nil, replyCount: Int? = 0, likeCount: Int? = 0, likedByMe: Bool? = nil,
                mentions: [Mention]? = [], tags: [Hashtag] = []) {
        self.id = id
        self.postID = postID
        self.userID = userID
        self.body = body
        self.createdAt = createdAt
        self.profile = profile
        self.replyTo = replyTo
        self.replyCount = replyCount
        self.likeCount = likeCount
        self.likedByMe = likedByMe
        self.mentions = mentions
        self.tags = tags
    }

    /// Written out for `tags` alone: a server before tags sends none (or null), which is [].
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        postID = try container.decode(Int.self, forKey: .postID)
        userID = try container.decode(Int.self, forKey: .userID)
        body = try container.decode(String.self, forKey: .body)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        profile = try container.decode(Profile.self, forKey: .profile)
        replyTo = try container.decodeIfPresent(UUID.self, forKey: .replyTo)
        replyCount = try container.decodeIfPresent(Int.self, forKey: .replyCount)
        likeCount = try container.decodeIfPresent(Int.self, forKey: .likeCount)
        likedByMe = try container.decodeIfPresent(Bool.self, forKey: .likedByMe)
        mentions = try container.decodeIfPresent([Mention].self, forKey: .mentions)
        tags = try container.decodeIfPresent([Hashtag].self, forKey: .tags) ?? []
    }
}
