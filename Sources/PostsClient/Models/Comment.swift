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
    }

    public init(id: UUID, postID: Int, userID: Int, body: String, createdAt: Date, profile: Profile,
                replyTo: UUID? = nil, replyCount: Int? = 0, likeCount: Int? = 0, likedByMe: Bool? = nil,
                mentions: [Mention]? = []) {
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
    }
}
