import Postgres

/// What a write's events send to other servers (API.md "Federation", Out), in the write's
/// own statement like its other effects: one `federation.publish` job per activity to
/// send, queued only for what a local user did, and a tombstone for each local post or
/// comment deleted (its `GET` answers `410` from then on). The job builds the activity and
/// finds the inboxes after the commit: the write itself never waits for other servers,
/// and costs one row more.
enum FederationEffects {
    /// The CTEs for the table's events, if any; what they make is stamped `now`.
    static func ctes(_ table: EventTable, at now: SQLQuery) -> [SQLQuery] {
        switch table {
        case .postCreated:
            [publishing("federated_posts", .createPost, post: "e.post", actor: "e.author", from: "post_created e",
                        where: local("e.author"), at: now)]
        case .postUpdated:
            [publishing("federated_edits", .updatePost, post: "e.post", actor: "e.actor", from: "post_updated e",
                        where: local("e.actor") + " AND NOT EXISTS (SELECT 1 FROM remote_objects o WHERE o.post_id = e.post)", at: now)]
        case .postsDeleted:
            // Each post of the subtree, its own; not a remote one's copy here.
            [
                """
                federated_post_tombstones AS (
                    INSERT INTO federation_tombstones (object_id, post_id, actor_id, deleted_at)
                    SELECT 'post:' || d.id, d.id, e.actor, \(now) FROM posts_deleted e, unnest(e.deleted_ids) d(id)
                    WHERE \(unsafeSQL: local("e.actor")) AND NOT EXISTS (SELECT 1 FROM remote_objects o WHERE o.post_id = d.id)
                    ON CONFLICT DO NOTHING RETURNING post_id, actor_id
                )
                """,
                publishing("federated_post_deletions", .deletePost, post: "t.post_id", actor: "t.actor_id",
                           from: "federated_post_tombstones t", where: "true", at: now),
            ]
        case .commentCreated:
            [publishing("federated_comments", .createComment, comment: "e.comment", actor: "e.actor", from: "comment_created e",
                        where: local("e.actor"), at: now)]
        case .commentDeleted:
            [
                """
                federated_comment_tombstones AS (
                    INSERT INTO federation_tombstones (object_id, comment_id, actor_id, deleted_at)
                    SELECT 'comment:' || e.comment, e.comment, e.actor, \(now) FROM comment_deleted e
                    WHERE \(unsafeSQL: local("e.actor")) AND NOT EXISTS (SELECT 1 FROM remote_objects o WHERE o.comment_id = e.comment)
                    ON CONFLICT DO NOTHING RETURNING comment_id, actor_id
                )
                """,
                publishing("federated_comment_deletions", .deleteComment, comment: "t.comment_id", actor: "t.actor_id",
                           from: "federated_comment_tombstones t", where: "true", at: now),
            ]
        case .likeChanged:
            // To the remote author of the post liked (followers are not told of likes).
            [publishing("federated_likes", nil, post: "e.post", actor: "e.actor", liked: "e.liked", from: "like_changed e",
                        where: local("e.actor") + " AND EXISTS (SELECT 1 FROM remote_objects o WHERE o.post_id = e.post)", at: now)]
        case .followChanged:
            // An unfollow of a remote account (a follow is sent when asked, `RemoteFollows`).
            [publishing("federated_unfollows", .undoFollow, actor: "e.follower", followee: "e.followee", from: "follow_changed e",
                        where: "NOT e.following AND NOT e.by_account_deletion AND " + local("e.follower")
                            + " AND EXISTS (SELECT 1 FROM remote_actors r WHERE r.user_id = e.followee)", at: now)]
        case .commentLikeChanged, .relationsChanged, .profileUpdated, .profileDeleted:
            []
        }
    }

    /// `federated_block`: a block of a remote account (or its end), when `written` (the
    /// statement's CTE that changed the block) has a row; a pending follow between them goes.
    static func blocking(_ on: Bool, actor: Int64, target: Int64, after written: String, at now: SQLQuery) -> SQLQuery {
        let kind: OutgoingActivity.Kind = on ? .block : .undoBlock
        return """
            federated_block AS (
                INSERT INTO jobs (kind, payload, run_at, created_at)
                SELECT \(JobKind.federationPublish.name),
                       \(JobPayload.federationPublish(kind: "\(kind.rawValue)::text", actor: "\(actor)::bigint", followee: "\(target)::bigint")),
                       \(now), \(now)
                WHERE EXISTS (SELECT 1 FROM \(unsafeSQL: written)) AND EXISTS (SELECT 1 FROM remote_actors r WHERE r.user_id = \(target))
                  AND \(unsafeSQL: local("\(actor)"))
            ), unasked AS (
                DELETE FROM follow_requests WHERE \(on) AND EXISTS (SELECT 1 FROM \(unsafeSQL: written))
                  AND ((follower_id = \(actor) AND followee_id = \(target)) OR (follower_id = \(target) AND followee_id = \(actor)))
            )
            """
    }

    /// `<user>` is one of ours (not a remote account).
    private static func local(_ user: String) -> String {
        "NOT EXISTS (SELECT 1 FROM remote_actors r WHERE r.user_id = \(user))"
    }

    /// `name AS (INSERT INTO jobs …)`: a publish job per row of `source` that passes `condition`.
    /// `kind` nil with `liked`: a like or its undo, by the row.
    private static func publishing(_ name: String, _ kind: OutgoingActivity.Kind?, post: String? = nil, comment: String? = nil,
                                   actor: String, followee: String? = nil, liked: String? = nil,
                                   from source: String, where condition: String, at now: SQLQuery) -> SQLQuery {
        let kindSQL: SQLQuery = kind.map { "\($0.rawValue)" }
            ?? SQLQuery(unsafeSQL: "CASE WHEN \(liked!) THEN '\(OutgoingActivity.Kind.like.rawValue)' ELSE '\(OutgoingActivity.Kind.undoLike.rawValue)' END")
        let payload = JobPayload.federationPublish(kind: kindSQL, actor: SQLQuery(unsafeSQL: actor),
                                                   post: post.map { SQLQuery(unsafeSQL: $0) },
                                                   comment: comment.map { SQLQuery(unsafeSQL: $0) },
                                                   followee: followee.map { SQLQuery(unsafeSQL: $0) })
        return """
            \(unsafeSQL: name) AS (
                INSERT INTO jobs (kind, payload, run_at, created_at)
                SELECT \(JobKind.federationPublish.name), \(payload), \(now), \(now) FROM \(unsafeSQL: source)
                WHERE \(unsafeSQL: condition)
            )
            """
    }
}
