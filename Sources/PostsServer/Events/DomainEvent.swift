import Foundation

/// What a write did, in the domain's terms. A write runs in one transaction and returns its
/// events (`Written`); the write path (`WritePath`) hands them to `EventEffects`, the one
/// place that turns them into what follows from them — the changes clients sync from, the
/// notifications and their pushes, the home feeds — in the same transaction. Each event
/// carries what those need to know as the write left it (a counter after the write, the
/// JSON of the row as the write's answer shows it), so nothing is read twice.
enum DomainEvent: Sendable {
    case postCreated(PostCreated)
    case postUpdated(PostUpdated)
    case postsDeleted(PostsDeleted)
    case likeChanged(LikeChanged)
    case commentCreated(CommentCreated)
    case commentDeleted(CommentDeleted)
    case commentLikeChanged(CommentLikeChanged)
    case followChanged(FollowChanged)
    case relationsChanged(RelationsChanged)
    case profileUpdated(ProfileUpdated)
    case profileDeleted(ProfileDeleted)
}

/// A new post.
struct PostCreated: Sendable {
    let post: Int64
    let author: Int64
    let parent: Int64?
    /// Who wrote the parent (told of the reply), and the parent's `child_count` after it.
    let parentAuthor: Int64?
    let parentChildCount: Int?
    /// The post as API.md shows it (without `liked_by_me`).
    let json: [UInt8]
    /// The users its text names (told they were mentioned).
    let mentioned: [Int64]
}

/// A post changed: edited, moved under another parent, or emptied into a tombstone.
struct PostUpdated: Sendable {
    let post: Int64
    let parent: Int64?
    /// Who changed it (the author, a moderator, the deleted account's owner).
    let actor: Int64
    let json: [UInt8]
    /// A move's former parent (`.some(nil)`: it was a root); nil when it did not move.
    var movedFrom: Int64?? = nil
    /// Users an edit now names and no longer names.
    var mentionsAdded: [Int64] = []
    var mentionsRemoved: [Int64] = []
}

/// A post and its whole subtree deleted.
struct PostsDeleted: Sendable {
    let post: Int64
    let parent: Int64?
    let parentChildCount: Int?
    let actor: Int64
    let deletedIDs: [Int64]
}

/// A like given or taken back.
struct LikeChanged: Sendable {
    let post: Int64
    let parent: Int64?
    let postAuthor: Int64
    let actor: Int64
    let liked: Bool
    let likeCount: Int
}

/// A new comment, or a reply in a comment's thread.
struct CommentCreated: Sendable {
    let comment: UUID
    let post: Int64
    /// The post's parent (what the change feed's filters look at).
    let postParent: Int64?
    let postAuthor: Int64
    /// The thread's top-level comment and its author, for a reply.
    let replyTo: UUID?
    let replyToAuthor: Int64?
    let actor: Int64
    let json: [UInt8]
    /// The post's `comment_count` after it.
    let commentCount: Int
    let mentioned: [Int64]
}

/// A comment deleted (a top-level one with its replies).
struct CommentDeleted: Sendable {
    let comment: UUID
    let post: Int64
    let postParent: Int64?
    let actor: Int64
    let commentCount: Int
    let replyTo: UUID?
}

/// A comment's like given or taken back.
struct CommentLikeChanged: Sendable {
    let comment: UUID
    let post: Int64
    let postParent: Int64?
    let commentAuthor: Int64
    let actor: Int64
    let liked: Bool
    let likeCount: Int
}

/// A follow begun or ended, with both users' counters after it.
struct FollowChanged: Sendable {
    let follower: Int64
    let followee: Int64
    let following: Bool
    let followersCount: Int
    let followingCount: Int
    /// Who did it: the follower, or the other side of a block, or a deleted account.
    let actor: Int64
    /// Ended by the deletion of one side's account: its feed rows and notifications go
    /// with the account (migrations 0013 and 0015's cascades), not one by one.
    var byAccountDeletion = false
}

/// Blocks or mutes that concern these users changed: what they may see changed with them,
/// also for their streams already open.
struct RelationsChanged: Sendable {
    let users: [Int64]
}

struct ProfileUpdated: Sendable {
    let user: Int64
    let json: [UInt8]
}

struct ProfileDeleted: Sendable {
    let user: Int64
}

/// A write's answer and what it did.
struct Written<Value> {
    let value: Value
    let events: [DomainEvent]

    init(_ value: Value, _ events: [DomainEvent] = []) {
        self.value = value
        self.events = events
    }
}
