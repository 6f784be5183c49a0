import Postgres

/// Who is notified of what (API.md "Notifications"), the one place that says it, over the
/// events of a write (`EventTable`): a like of one's post or comment, a comment on or under
/// one's post, a reply to one's comment, a mention, a follow. Never one's own act; one
/// notification per person and act, the first of the kinds that applies (a mention inside
/// a reply to your comment is `mentioned`); undoing the act (unlike, unfollow, a mention
/// edited away) takes it back. Whether the recipient may be told at all (not across a
/// block, not from someone they muted) is the visibility policy's (`Visibility.notifiable`).
/// Deleted posts, comments and accounts take their notifications with them (migration
/// 0015's cascades).
enum NotificationRules {
    /// A select of the notices the table's events give: `source` (the table), `seq`,
    /// `priority` (the first kind that applies wins), `recipient`, `actor`, `type`, `post`,
    /// `comment`, `only_if_none`
    /// (only if the recipient has no notification about this post yet: a mention added by
    /// an edit, to someone already told of the post). Nil when the table's events notify no one.
    static func notices(_ table: EventTable) -> SQLQuery? {
        let sql: String
        switch table {
        case .postCreated:
            sql = """
                \(notice(priority: 1, recipient: "m.id", actor: "e.author", type: "mentioned", post: "e.post"))
                FROM post_created e, unnest(e.mentioned) m(id)
                UNION ALL \(notice(priority: 2, recipient: "e.parent_author", actor: "e.author", type: "post.replied", post: "e.post"))
                FROM post_created e WHERE e.parent_author IS NOT NULL
                """
        case .postUpdated:
            sql = """
                \(notice(priority: 1, recipient: "m.id", actor: "e.actor", type: "mentioned", post: "e.post", onlyIfNone: true))
                FROM post_updated e, unnest(e.mentions_added) m(id)
                """
        case .likeChanged:
            sql = """
                \(notice(priority: 1, recipient: "e.post_author", actor: "e.actor", type: "post.liked", post: "e.post"))
                FROM like_changed e WHERE e.liked
                """
        case .commentCreated:
            sql = """
                \(notice(priority: 1, recipient: "m.id", actor: "e.actor", type: "mentioned", post: "e.post", comment: "e.comment"))
                FROM comment_created e, unnest(e.mentioned) m(id)
                UNION ALL \(notice(priority: 2, recipient: "e.reply_to_author", actor: "e.actor", type: "comment.replied",
                                   post: "e.post", comment: "e.comment"))
                FROM comment_created e WHERE e.reply_to_author IS NOT NULL
                UNION ALL \(notice(priority: 3, recipient: "e.post_author", actor: "e.actor", type: "post.commented",
                                   post: "e.post", comment: "e.comment"))
                FROM comment_created e
                """
        case .commentLikeChanged:
            sql = """
                \(notice(priority: 1, recipient: "e.comment_author", actor: "e.actor", type: "comment.liked", post: "e.post",
                         comment: "e.comment"))
                FROM comment_like_changed e WHERE e.liked
                """
        case .followChanged:
            sql = """
                \(notice(priority: 1, recipient: "e.followee", actor: "e.follower", type: "followed"))
                FROM follow_changed e WHERE e.following
                """
        case .postsDeleted, .commentDeleted, .relationsChanged, .profileUpdated, .profileDeleted:
            return nil
        }
        return SQLQuery(unsafeSQL: "SELECT '\(table.rawValue)'::text AS source, n.* FROM (\(sql)) n")
    }

    /// The CTEs that take back the notifications the table's events undo (by the indexes
    /// that find them: a post's, an actor's); nil when they undo none.
    static func withdrawals(_ table: EventTable) -> SQLQuery? {
        let sql: String
        switch table {
        case .likeChanged:
            sql = """
                unliked AS (
                    DELETE FROM notifications n USING like_changed e
                    WHERE NOT e.liked AND n.post_id = e.post AND n.actor_id = e.actor AND n.type = 'post.liked'
                )
                """
        case .commentLikeChanged:
            sql = """
                comment_unliked AS (
                    DELETE FROM notifications n USING comment_like_changed e
                    WHERE NOT e.liked AND n.post_id = e.post AND n.actor_id = e.actor AND n.comment_id = e.comment
                      AND n.type = 'comment.liked'
                )
                """
        case .followChanged:
            sql = """
                unfollowed AS (
                    DELETE FROM notifications n USING follow_changed e
                    WHERE NOT e.following AND NOT e.by_account_deletion
                      AND n.actor_id = e.follower AND n.recipient_id = e.followee AND n.type = 'followed'
                )
                """
        case .postUpdated:
            sql = """
                unmentioned AS (
                    DELETE FROM notifications n USING post_updated e, unnest(e.mentions_removed) m(id)
                    WHERE n.post_id = e.post AND n.actor_id = e.actor AND n.recipient_id = m.id AND n.type = 'mentioned'
                      AND n.comment_id IS NULL
                )
                """
        case .postCreated, .postsDeleted, .commentCreated, .commentDeleted, .relationsChanged, .profileUpdated,
             .profileDeleted:
            return nil
        }
        return SQLQuery(unsafeSQL: sql)
    }

    private static func notice(priority: Int, recipient: String, actor: String, type: String, post: String = "NULL",
                               comment: String = "NULL", onlyIfNone: Bool = false) -> String {
        """
        SELECT e.seq, \(priority) AS priority, (\(recipient))::bigint AS recipient, (\(actor))::bigint AS actor, \
        '\(type)'::text AS type, (\(post))::bigint AS post, (\(comment))::uuid AS comment, \(onlyIfNone) AS only_if_none
        """
    }
}
