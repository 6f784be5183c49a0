import Postgres

/// Which change each event records (API.md "Changes and live events"): one per event, in
/// the events' order; for `relations_changed` a private one to the user concerned (never
/// shown: it tells their open streams to read their sets again, in order with everything
/// else). The members of each type's data are API.md's, in its order.
enum ChangeRows {
    /// Private changes of this type are for the live feed's own bookkeeping.
    static let relationsChanged = "relations.changed"

    /// A select of the table's changes: `seq`, then the `changes` columns (`type`, `post_id`,
    /// `parent_id`, `old_parent_id`, `reparented`, `user_id`, `recipient_id`, `data`).
    static func select(_ table: EventTable) -> SQLQuery {
        switch table {
        case .postCreated:
            row("post.created", post: "post", parent: "parent", user: "author", data: """
                CASE WHEN parent_child_count IS NULL THEN json_build_object('post', json)
                     ELSE json_build_object('post', json, 'parent_child_count', parent_child_count) END
                """, from: table)
        case .postUpdated:
            row("post.updated", post: "post", parent: "parent", oldParent: "old_parent", reparented: "moved", user: "actor", data: """
                CASE WHEN moved THEN json_build_object('post', json, 'old_parent_id', old_parent)
                     ELSE json_build_object('post', json) END
                """, from: table)
        case .postsDeleted:
            row("post.deleted", post: "post", parent: "parent", user: "actor", data: """
                CASE WHEN parent_child_count IS NULL THEN json_build_object('deleted_ids', deleted_ids)
                     ELSE json_build_object('deleted_ids', deleted_ids, 'parent_child_count', parent_child_count) END
                """, from: table)
        case .likeChanged:
            row("like.changed", post: "post", parent: "parent", user: "actor",
                data: "json_build_object('liked', liked, 'like_count', like_count)", from: table)
        case .commentCreated:
            row("comment.created", post: "post", parent: "post_parent", user: "actor",
                data: "json_build_object('comment', json, 'comment_count', comment_count, 'reply_to', reply_to)", from: table)
        case .commentDeleted:
            row("comment.deleted", post: "post", parent: "post_parent", user: "actor",
                data: "json_build_object('comment_id', comment, 'comment_count', comment_count, 'reply_to', reply_to)", from: table)
        case .commentLikeChanged:
            row("comment.liked", post: "post", parent: "post_parent", user: "actor",
                data: "json_build_object('comment_id', comment, 'liked', liked, 'like_count', like_count)", from: table)
        case .followChanged:
            row("follow.changed", user: "actor", data: """
                json_build_object('follower_id', follower, 'followee_id', followee, 'following', following,
                                  'followers_count', followers_count, 'following_count', following_count)
                """, from: table)
        case .relationsChanged:
            row(relationsChanged, user: "user_id", recipient: "user_id", data: "'{}'::json", from: table)
        case .profileUpdated:
            row("profile.updated", user: "user_id", data: "json_build_object('profile', json)", from: table)
        case .profileDeleted:
            row("profile.deleted", user: "user_id", data: "'{}'::json", from: table)
        }
    }

    private static func row(_ type: String, post: String = "NULL", parent: String = "NULL", oldParent: String = "NULL",
                            reparented: String = "false", user: String, recipient: String = "NULL", data: String,
                            from table: EventTable) -> SQLQuery {
        SQLQuery(unsafeSQL: """
            SELECT seq, '\(type)' AS type, \(post)::bigint AS post_id, \(parent)::bigint AS parent_id, \
            \(oldParent)::bigint AS old_parent_id, \(reparented) AS reparented, \(user)::bigint AS user_id, \
            \(recipient)::bigint AS recipient_id, \(data) AS data FROM \(table.rawValue)
            """)
    }
}
