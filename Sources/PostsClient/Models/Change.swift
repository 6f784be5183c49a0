import Foundation

/// One recorded write, as `/api/changes` and `/api/events` send it: the state after the
/// write (API.md "Changes and live events"). Which optional fields are present depends on
/// `type`; `seq` is the cursor to persist and resume from.
public struct Change: Codable, Sendable, Equatable, Identifiable {
    /// Opaque; pass it back as `since` (or let `events(filter:since:)` do so).
    public let seq: String
    public let type: ChangeType
    public let at: Date
    /// The post the change is about; nil on `profile.updated` and `profile.deleted`.
    public let postID: Int?
    /// That post's parent; nil for a root post and on the profile changes.
    public let parentID: Int?
    /// Who made the change.
    public let userID: Int
    /// `post.created`, `post.updated`.
    public let post: Post?
    /// `post.created` and `post.deleted` of a post that has (had) a parent.
    public let parentChildCount: Int?
    /// `post.updated` by a reparent: where the post was before.
    public let oldParentID: Int?
    /// `post.deleted`: the post and its whole subtree.
    public let deletedIDs: [Int]?
    /// `like.changed`, `comment.liked`.
    public let liked: Bool?
    /// The post's (`like.changed`) or the comment's (`comment.liked`).
    public let likeCount: Int?
    /// `comment.created`.
    public let comment: Comment?
    /// `comment.created`, `comment.deleted`.
    public let commentCount: Int?
    /// `comment.deleted`, `comment.liked`.
    public let commentID: UUID?
    /// `comment.created`, `comment.deleted`: the thread's top-level comment, nil for a
    /// top-level comment (whose delete took its replies with it).
    public let replyTo: UUID?
    /// `profile.updated`.
    public let profile: Profile?
    /// `follow.changed`: who follows (or stopped following) whom, and both users'
    /// counters after it (the followee's `followersCount`, the follower's `followingCount`).
    public let followerID: Int?
    public let followeeID: Int?
    public let following: Bool?
    public let followersCount: Int?
    public let followingCount: Int?

    public var id: String { seq }

    enum CodingKeys: String, CodingKey {
        case seq, type, at
        case postID = "post_id"
        case parentID = "parent_id"
        case userID = "user_id"
        case post
        case parentChildCount = "parent_child_count"
        case oldParentID = "old_parent_id"
        case deletedIDs = "deleted_ids"
        case liked
        case likeCount = "like_count"
        case comment
        case commentCount = "comment_count"
        case commentID = "comment_id"
        case replyTo = "reply_to"
        case profile
        case followerID = "follower_id"
        case followeeID = "followee_id"
        case following
        case followersCount = "followers_count"
        case followingCount = "following_count"
    }
}

/// A change's `type`. Open-ended, so that a client keeps decoding when the server learns
/// a new kind of change: compare with the constants, ignore what you do not know.
public struct ChangeType: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    public static let postCreated = ChangeType(rawValue: "post.created")
    public static let postUpdated = ChangeType(rawValue: "post.updated")
    public static let postDeleted = ChangeType(rawValue: "post.deleted")
    public static let likeChanged = ChangeType(rawValue: "like.changed")
    public static let commentCreated = ChangeType(rawValue: "comment.created")
    public static let commentDeleted = ChangeType(rawValue: "comment.deleted")
    public static let commentLiked = ChangeType(rawValue: "comment.liked")
    public static let profileUpdated = ChangeType(rawValue: "profile.updated")
    /// The account `userID` was deleted: forget its profile (its posts' changes came before).
    public static let profileDeleted = ChangeType(rawValue: "profile.deleted")
    /// A follow began or ended (`following`); `userID` made it happen (the follower, or
    /// the user whose block or deletion ended it).
    public static let followChanged = ChangeType(rawValue: "follow.changed")
}
