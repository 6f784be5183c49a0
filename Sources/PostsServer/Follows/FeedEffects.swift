import Postgres

/// What the events do to the home feeds (see `FeedService` for why the feed is written
/// when posts and follows are): a new post goes into each of its author's followers' feeds;
/// a follow copies the followee's newest `FollowService.backfillLimit` posts into the
/// follower's; an unfollow (or a block's) takes the followee's posts out of it. Deleted
/// posts and accounts take their rows with them (migration 0013's cascades).
///
/// A post and a follow of its author made at the same moment: the follow holds both
/// users' profile locks, the post its author's (shared) before its first write (see
/// `WriteLocks`), and each reads the other's table in a statement that starts after its
/// locks, so exactly one of them writes the row.
struct FeedEffects {
    private var fannedOut: [Int64] = []
    private var backfills: [(follower: Int64, followee: Int64)] = []
    private var removals: [(follower: Int64, followee: Int64)] = []

    init(_ events: [DomainEvent]) {
        for event in events {
            switch event {
            case .postCreated(let e):
                fannedOut.append(e.post)
            case .followChanged(let e) where e.following:
                backfills.append((e.follower, e.followee))
            case .followChanged(let e) where !e.byAccountDeletion:
                removals.append((e.follower, e.followee))
            default:
                break
            }
        }
    }

    /// The effect statement's CTEs (`fanned`, `backfilled`, `unfed`) for what is to do.
    var parts: [SQLQuery] {
        var parts: [SQLQuery] = []
        if !fannedOut.isEmpty {
            parts.append("""
                fanned AS (
                    INSERT INTO feed_entries (user_id, post_id, author_id, created_at)
                    SELECT f.follower_id, p.id, p.user_id, p.created_at
                    FROM posts p JOIN follows f ON f.followee_id = p.user_id
                    WHERE p.id = ANY(\(PostgresArray(fannedOut))) AND NOT p.deleted
                )
                """)
        }
        if !backfills.isEmpty {
            parts.append("""
                backfilled AS (
                    INSERT INTO feed_entries (user_id, post_id, author_id, created_at)
                    SELECT b.follower, recent.id, recent.user_id, recent.created_at
                    FROM unnest(\(PostgresArray(backfills.map(\.follower))), \(PostgresArray(backfills.map(\.followee))))
                        AS b(follower, followee),
                    LATERAL (
                        SELECT id, user_id, created_at FROM posts WHERE user_id = b.followee AND NOT deleted
                        ORDER BY created_at DESC, id DESC LIMIT \(literal: FollowService.backfillLimit)
                    ) recent
                    ON CONFLICT DO NOTHING
                )
                """)
        }
        if !removals.isEmpty {
            parts.append("""
                unfed AS (
                    DELETE FROM feed_entries fe
                    USING unnest(\(PostgresArray(removals.map(\.follower))), \(PostgresArray(removals.map(\.followee))))
                        AS r(follower, followee)
                    WHERE fe.user_id = r.follower AND fe.author_id = r.followee
                )
                """)
        }
        return parts
    }
}
