import Postgres

/// `GET /api/feed` (API.md "Following"): the posts, of any depth, of the people the caller
/// follows and of the caller, newest first, keyset-paged; without suspended authors, those
/// on either side of a block, muted ones and tombstones.
///
/// Why fan-out on write. The cost must not grow with the database or with how many people
/// the caller follows (aim: p99 under 20 ms at 1M posts following 1,000). Measured with
/// pgbench (one client, 1M posts, 10k users, database time only, a page of 21):
/// - `user_id IN (followees) ORDER BY created_at DESC` over the global index: 0.38 / 2.0 /
///   18.5 ms for 10 / 100 / 1,000 followees: it walks everyone's posts and keeps the few.
/// - a bounded k-way merge, one LATERAL per followee over posts(user_id, created_at DESC,
///   id DESC) with a LIMIT, then a top-N sort: 0.24 / 0.85 / 7.6 ms: one index descent per
///   followee, linear in the followees.
/// - this table, one row per (reader, post of someone the reader follows): one keyset walk
///   of the reader's rows merged with one of the reader's own posts (two backward index
///   walks under a Merge Append that stops at the page): 0.84 ms of database time for
///   1,000 followees at 1M posts (EXPLAIN ANALYZE, 100k feed rows; 0.52 ms at 10k posts),
///   and through the server (`bench/feed.sh`, 4 connections) a p50 of 2.5-2.7 ms at 1M
///   posts for 10, 100 and 1,000 followees alike.
/// So the work moves to the writes (a post's insert, database time: 0.15 ms without the
/// triggers, 0.22 with them and no follower, 6.0 ms for an author with 1,000 followers): a
/// new post adds a row for each of its author's followers in the creating transaction (one
/// INSERT … SELECT from follows, in the statement that writes the post: `FeedEffects`, for
/// every path that makes posts); a follow copies the followee's newest
/// `FollowService.backfillLimit` posts; unfollow and block remove the author's rows (index
/// on (user_id, author_id)); deleted posts and users take theirs (triggers, not foreign
/// keys: a key's check per fanned-out row cost more than the row itself), and a tombstone's
/// go when it is handed to the reserved user. The filters that can change without a write
/// to this table (suspension, blocks and mutes as the caller's cached sets have them,
/// tombstones) are still applied as the rows are read: the walk skips those rows and goes
/// on, so a page is full whenever more posts follow.
///
/// A post and a follow of its author made at the same moment: the follow holds both
/// users' profile locks, the post's fan-out takes its author's shared and then reads the
/// follows afresh, and the follow reads the posts after its locks, so exactly one of them
/// writes the row.
struct FeedService: Sendable {
    let pool: ConnectionPool

    func page(for caller: Caller, _ request: PageRequest<KeysetCursor>) throws -> PostService.Page {
        var entries: SQLQuery = "SELECT fe.post_id AS id, fe.created_at FROM feed_entries fe WHERE fe.user_id = \(caller.userID)"
        var own: SQLQuery = "SELECT o.id, o.created_at FROM posts o WHERE o.user_id = \(caller.userID)"
        if let cursor = request.cursor {
            entries.append(cursor.before(created: "fe.created_at", id: "fe.post_id"))
            own.append(cursor.before(created: "o.created_at", id: "o.id"))
        }
        var query: SQLQuery = """
            SELECT \(unsafeSQL: PostShape.columns)\(PostShape.likedByMe(caller: caller)) FROM (
                (\(entries) ORDER BY fe.created_at DESC, fe.post_id DESC)
                UNION ALL
                (\(own) ORDER BY o.created_at DESC, o.id DESC)
            ) e JOIN posts p ON p.id = e.id \(unsafeSQL: PostShape.authorJoin)
            WHERE NOT p.deleted
            """
        query.append(Visibility.visible(on: .feed, author: "p.user_id", to: caller, suspendedFlag: "pr.suspended"))
        query.append(" ORDER BY e.created_at DESC, e.id DESC LIMIT \(literal: request.limit + 1)")
        return try pool.withConnection { connection in
            try PostService.page(from: connection.query(query), limit: request.limit, withLiked: true)
        }
    }
}
