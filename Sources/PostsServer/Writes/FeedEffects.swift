import Postgres

/// What a write's events do to the home feeds (`FeedService` has the design and its
/// measurements):
/// - a new post by an author with followers queues one `feed.fanout` job (`FeedFanOut`
///   copies it into the followers' feeds in batches, off the write's transaction), unless
///   the author has `fanOutLimit` followers or more, or had when an earlier post was made:
///   such an author joins `feed_large_authors` (`since`: this post's moment) and its
///   followers' feeds read its posts from then on where they are;
/// - a follow copies the followee's newest `FollowService.backfillLimit` posts into the
///   follower's feed (of a large author, those before it was large: the feed merges the
///   rest); an unfollow (or a block's) takes the followee's posts out of it.
/// Deleted posts and accounts take their rows with them (migration 0018's cascades).
///
/// A post and a follow of its author made at the same moment: the follow holds both users'
/// profile locks, the post its author's (shared), each taken in a statement before the one
/// that writes (`WriteLocks`), so the follow's copy sees the post or the post committed
/// after the follow, and its fan-out, which starts after that commit, sees the follow.
struct FeedEffects: Sendable {
    /// `FEED_FANOUT_LIMIT`: from this many followers on, an author's posts are merged into
    /// its followers' feeds as they are read rather than copied into them.
    let fanOutLimit: Int

    /// One of the CTEs, and whether it queues a job.
    struct Part {
        let cte: SQLQuery
        var queuesJobs = false
    }

    /// The CTEs for the table's events (`fanned`, `large`, `backfilled`, `unfed`), if any;
    /// what they make is stamped `now` (the clock's, in SQL).
    func ctes(_ table: EventTable, at now: SQLQuery) -> [Part] {
        switch table {
        case .postCreated:
            // The author's row as the statement found it (its follows held still by the lock).
            return [Part(cte: """
                fanned AS (
                    INSERT INTO jobs (kind, payload, run_at, created_at)
                    SELECT \(JobKind.feedFanOut.name), \(JobPayload.feedFanOut(post: "e.post", author: "e.author")), \(now), \(now)
                    FROM post_created e JOIN profiles a ON a.user_id = e.author
                    WHERE a.followers_count > 0 AND a.followers_count < \(literal: fanOutLimit)
                      AND NOT EXISTS (SELECT 1 FROM feed_large_authors l WHERE l.user_id = e.author)
                    ORDER BY e.seq
                )
                """, queuesJobs: true), Part(cte: """
                large AS (
                    INSERT INTO feed_large_authors (user_id, since)
                    SELECT DISTINCT e.author, \(now) FROM post_created e JOIN profiles a ON a.user_id = e.author
                    WHERE a.followers_count >= \(literal: fanOutLimit)
                    ON CONFLICT DO NOTHING
                )
                """)]
        case .followChanged:
            return [Part(cte: """
                backfilled AS (
                    INSERT INTO feed_entries (user_id, post_id, author_id, created_at)
                    SELECT e.follower, recent.id, recent.user_id, recent.created_at
                    FROM follow_changed e LEFT JOIN feed_large_authors l ON l.user_id = e.followee, LATERAL (
                        SELECT id, user_id, created_at FROM posts
                        WHERE user_id = e.followee AND NOT deleted AND created_at < coalesce(l.since, 'infinity')
                        ORDER BY created_at DESC, id DESC LIMIT \(literal: FollowService.backfillLimit)
                    ) recent
                    WHERE e.following
                    ON CONFLICT DO NOTHING
                )
                """), Part(cte: """
                unfed AS (
                    DELETE FROM feed_entries fe USING follow_changed e
                    WHERE NOT e.following AND NOT e.by_account_deletion AND fe.user_id = e.follower AND fe.author_id = e.followee
                )
                """)]
        case .postUpdated, .postsDeleted, .likeChanged, .commentCreated, .commentDeleted, .commentLikeChanged,
             .relationsChanged, .profileUpdated, .profileDeleted:
            return []
        }
    }
}
