import Foundation

/// Something another user did that concerns the caller (API.md "Notifications"): liked,
/// commented on or replied under its post, replied to or liked its comment, mentioned it,
/// or followed it. Named `PostsNotification` after the server it comes from, as
/// `PostsClient` and `PostsAPIError` are: plain `Notification` is Foundation's
/// `NotificationCenter` message, and a name such as `AppNotification` would read as the
/// app's own (a local or push notification) rather than this server's record of an act.
///
/// Which ids are set depends on `type`:
/// - `postLiked`: `postID`, the caller's post.
/// - `commentLiked`: `commentID`, the caller's comment, and its `postID`.
/// - `postCommented`: `commentID`, the new comment, under the caller's post `postID`.
/// - `commentReplied`: `commentID`, the reply in the caller's comment's thread, and its `postID`.
/// - `postReplied`: `postID`, the new child post (its parent is the caller's).
/// - `mentioned`: `postID`, the post that names the caller, or the post and `commentID` of
///   the comment that does.
/// - `followed`: neither: the `actor` is the news.
public struct PostsNotification: Codable, Sendable, Equatable, Hashable, Identifiable {
    /// Grows with each notification written: `markNotificationsRead(upTo:)` takes one.
    public let id: Int
    public let type: NotificationType
    public let createdAt: Date
    /// Set by `markNotificationsRead(upTo:)`; a new notification is unread.
    public let read: Bool
    /// Who did it: the profile as it is now in the list, as it was when the notification
    /// was written in the live stream.
    public let actor: Profile
    public let postID: Int?
    public let commentID: UUID?

    enum CodingKeys: String, CodingKey {
        case id, type
        case createdAt = "created_at"
        case read, actor
        case postID = "post_id"
        case commentID = "comment_id"
    }

    public init(id: Int, type: NotificationType, createdAt: Date, read: Bool, actor: Profile,
                postID: Int? = nil, commentID: UUID? = nil) {
        self.id = id
        self.type = type
        self.createdAt = createdAt
        self.read = read
        self.actor = actor
        self.postID = postID
        self.commentID = commentID
    }
}

/// A notification's `type`. Open-ended, like `ChangeType`: an app keeps decoding its list
/// and its stream when the server learns a new kind of notification (compare with the
/// constants; show the unknown ones generically or not at all).
public struct NotificationType: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// Someone liked the caller's post.
    public static let postLiked = NotificationType(rawValue: "post.liked")
    /// Someone liked the caller's comment.
    public static let commentLiked = NotificationType(rawValue: "comment.liked")
    /// Someone commented under the caller's post (a top-level comment or a reply).
    public static let postCommented = NotificationType(rawValue: "post.commented")
    /// Someone replied in the thread of the caller's (top-level) comment.
    public static let commentReplied = NotificationType(rawValue: "comment.replied")
    /// Someone posted a child of the caller's post.
    public static let postReplied = NotificationType(rawValue: "post.replied")
    /// Someone named the caller (`@username`) in a post or a comment. One notification per
    /// text: a mention in a comment under the caller's post is this, not `postCommented`.
    public static let mentioned = NotificationType(rawValue: "mentioned")
    /// Someone followed the caller.
    public static let followed = NotificationType(rawValue: "followed")
}
