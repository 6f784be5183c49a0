import Foundation

/// Who is notified of what (API.md "Notifications"), the one place that says it: a like of
/// one's post or comment, a comment on or under one's post, a reply to one's comment, a
/// mention, a follow. Never one's own act; one notification per person and act, the first
/// of the kinds that applies (a mention inside a reply to your comment is `mentioned`);
/// undoing the act (unlike, unfollow, a mention edited away) takes it back. Whether the
/// recipient may be told at all (not across a block, not from someone they muted) is the
/// visibility policy's, asked as the rows are written (`Visibility.notifiable`).
/// Deleted posts, comments and accounts take their notifications with them (migration
/// 0015's cascades).
enum NotificationRules {
    enum Kind: String, Sendable {
        case postLiked = "post.liked"
        case commentLiked = "comment.liked"
        case postCommented = "post.commented"
        case commentReplied = "comment.replied"
        case postReplied = "post.replied"
        case mentioned
        case followed
    }

    /// A notification to write.
    struct Notice: Sendable, Equatable {
        let recipient: Int64
        let actor: Int64
        let kind: Kind
        var post: Int64?
        var comment: UUID?
        /// Only if the recipient has no notification about this post yet (a mention added
        /// by an edit, to someone already told of the post).
        var onlyIfNone = false
    }

    /// A notification to take back: the actor's of that kind about that post or comment
    /// (or to that recipient, for a follow).
    struct Withdrawal: Sendable, Equatable {
        let actor: Int64
        let kind: Kind
        var recipient: Int64?
        var post: Int64?
        var comment: UUID?
    }

    static func notices(for event: DomainEvent) -> [Notice] {
        switch event {
        case .postCreated(let e):
            return firstPerRecipient(actor: e.author, [
                e.mentioned.map { Notice(recipient: $0, actor: e.author, kind: .mentioned, post: e.post) },
                e.parentAuthor.map { [Notice(recipient: $0, actor: e.author, kind: .postReplied, post: e.post)] } ?? [],
            ])
        case .postUpdated(let e):
            return firstPerRecipient(actor: e.actor, [e.mentionsAdded.map {
                Notice(recipient: $0, actor: e.actor, kind: .mentioned, post: e.post, onlyIfNone: true)
            }])
        case .likeChanged(let e) where e.liked:
            return firstPerRecipient(actor: e.actor, [[Notice(recipient: e.postAuthor, actor: e.actor, kind: .postLiked, post: e.post)]])
        case .commentCreated(let e):
            return firstPerRecipient(actor: e.actor, [
                e.mentioned.map { Notice(recipient: $0, actor: e.actor, kind: .mentioned, post: e.post, comment: e.comment) },
                e.replyToAuthor.map {
                    [Notice(recipient: $0, actor: e.actor, kind: .commentReplied, post: e.post, comment: e.comment)]
                } ?? [],
                [Notice(recipient: e.postAuthor, actor: e.actor, kind: .postCommented, post: e.post, comment: e.comment)],
            ])
        case .commentLikeChanged(let e) where e.liked:
            return firstPerRecipient(actor: e.actor, [[
                Notice(recipient: e.commentAuthor, actor: e.actor, kind: .commentLiked, post: e.post, comment: e.comment),
            ]])
        case .followChanged(let e) where e.following:
            return firstPerRecipient(actor: e.follower, [[Notice(recipient: e.followee, actor: e.follower, kind: .followed)]])
        default:
            return []
        }
    }

    static func withdrawals(for event: DomainEvent) -> [Withdrawal] {
        switch event {
        case .likeChanged(let e) where !e.liked:
            return [Withdrawal(actor: e.actor, kind: .postLiked, post: e.post)]
        case .commentLikeChanged(let e) where !e.liked:
            return [Withdrawal(actor: e.actor, kind: .commentLiked, post: e.post, comment: e.comment)]
        case .followChanged(let e) where !e.following && !e.byAccountDeletion:
            return [Withdrawal(actor: e.follower, kind: .followed, recipient: e.followee)]
        case .postUpdated(let e):
            return e.mentionsRemoved.map { Withdrawal(actor: e.actor, kind: .mentioned, recipient: $0, post: e.post) }
        default:
            return []
        }
    }

    /// The notices in order of precedence (earlier lists first), one per recipient, none
    /// to the actor.
    private static func firstPerRecipient(actor: Int64, _ candidates: [[Notice]]) -> [Notice] {
        var told = Set([actor])
        var notices: [Notice] = []
        for notice in candidates.joined() where told.insert(notice.recipient).inserted {
            notices.append(notice)
        }
        return notices
    }
}
