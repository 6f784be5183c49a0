import Postgres

/// What a write's events do to the home feeds (see `FeedService` for why the feed is
/// written when posts and follows are): a new post goes into each of its author's
/// followers' feeds; a follow copies the followee's newest `FollowService.backfillLimit`
/// posts into the follower's; an unfollow (or a block's) takes the followee's posts out of
/// it. Deleted posts and accounts take their rows with them (migration 0013's cascades).
///
/// A post and a follow of its author made at the same moment: the follow holds both
/// users' profile locks, the post its author's (shared), each taken in a statement before
/// the one that writes (`WriteLocks`), so each reads the other's table with a snapshot
/// taken after its locks, and exactly one of them writes the row.
enum FeedEffects {
    /// The CTEs for the table's events (`fanned`, `backfilled`, `unfed`), if any.
    static func ctes(_ table: EventTable) -> [SQLQuery] {
        switch table {
        case .postCreated:
            return ["""
                fanned AS (
                    INSERT INTO feed_entries (user_id, post_id, author_id, created_at)
                    SELECT f.follower_id, e.post, e.author, e.created_at FROM post_created e JOIN follows f ON f.followee_id = e.author
                )
                """]
        case .followChanged:
            return ["""
                backfilled AS (
                    INSERT INTO feed_entries (user_id, post_id, author_id, created_at)
                    SELECT e.follower, recent.id, recent.user_id, recent.created_at
                    FROM follow_changed e, LATERAL (
                        SELECT id, user_id, created_at FROM posts WHERE user_id = e.followee AND NOT deleted
                        ORDER BY created_at DESC, id DESC LIMIT \(literal: FollowService.backfillLimit)
                    ) recent
                    WHERE e.following
                    ON CONFLICT DO NOTHING
                )
                """, """
                unfed AS (
                    DELETE FROM feed_entries fe USING follow_changed e
                    WHERE NOT e.following AND NOT e.by_account_deletion AND fe.user_id = e.follower AND fe.author_id = e.followee
                )
                """]
        case .postUpdated, .postsDeleted, .likeChanged, .commentCreated, .commentDeleted, .commentLikeChanged,
             .relationsChanged, .profileUpdated, .profileDeleted:
            return []
        }
    }
}
