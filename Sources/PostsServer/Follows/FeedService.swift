import Postgres

/// `GET /api/feed` (API.md "Following", "Feeds at any scale"): the posts, of any depth, of
/// the people the caller follows and of the caller, newest first, keyset-paged, at least
/// `depth` posts deep; without suspended authors, those on either side of a block, muted
/// ones and tombstones.
///
/// Why a stored feed. The cost must not grow with the database or with how many people
/// the caller follows (aim: p99 under 20 ms at 1M posts following 1,000). Measured with
/// pgbench (one client, 1M posts, 10k users, database time only, a page of 21):
/// - `user_id IN (followees) ORDER BY created_at DESC` over the global index: 0.38 / 2.0 /
///   18.5 ms for 10 / 100 / 1,000 followees: it walks everyone's posts and keeps the few.
/// - a bounded k-way merge, one LATERAL per followee over posts(user_id, created_at DESC,
///   id DESC) with a LIMIT, then a top-N sort: 0.24 / 0.85 / 7.6 ms: one index descent per
///   followee, linear in the followees.
/// - `feed_entries`, one row per (reader, post of someone the reader follows): one keyset
///   walk of the reader's rows merged with one of the reader's own posts (backward index
///   walks under a Merge Append that stops at the page): 0.84 ms of database time for
///   1,000 followees at 1M posts, and through the server (`bench/feed.sh`, 4 connections)
///   a p50 of 2.5-2.7 ms at 1M posts for 10, 100 and 1,000 followees alike.
///
/// Who writes it, and when (Mastodon's and Twitter's hybrid, measured on this machine):
/// - a post by an author with followers is copied into their feeds by a job, in batches of
///   `FeedFanOut.followersPerBatch`, after the post's own transaction (`FeedEffects`,
///   `FeedFanOut`): the post answers in the same time for any audience, and lands in the
///   followers' feeds within the job queue's delay (milliseconds when it is idle);
/// - an author with `FEED_FANOUT_LIMIT` followers or more (10,000 by default) is not copied
///   from its next post on: it joins `feed_large_authors` (`since` that post), and each
///   feed read merges in the posts since then of the large authors the reader follows, one
///   LATERAL index descent each (the third arm below). Copying costs ~6 ms of database
///   time per 1,000 followers at every post, so a 1M-follower author's post would be ~6 s
///   of the queue's time; merging costs each read ~0.02 ms per large author followed
///   (EXPLAIN ANALYZE on a busy machine, a reader following 60 authors of 200 posts, 12,000
///   feed rows: 0.53 ms with none of them large, 0.65 with 5, 1.74 with all 60). The limit
///   trades the two: at 10,000 a post costs the queue at most ~60 ms, and a reader would
///   follow dozens of large accounts before the merge cost a millisecond;
/// - a follow copies the followee's newest `FollowService.backfillLimit` posts (of a large
///   author, those from before `since`: the rest is merged); unfollow and block remove the
///   author's rows; deleted posts and users take theirs (triggers: see migration 0013 for
///   why not foreign keys).
/// The filters that can change without a write to this table (suspension, blocks and mutes
/// as the caller's sets have them, tombstones) are applied as the rows are read: the walk
/// skips those rows and goes on, so a page is full whenever more posts follow. The rows
/// beyond a reader's `depth` newest are pruned (`UpkeepPruner`).
struct FeedService: Sendable {
    var pool: ConnectionPool

    /// Posts a reader can page back through (API.md: at least 800); then `next_cursor` is null.
    static let depth = 1_000

    struct Page: Sendable {
        let json: [UInt8]
        let nextCursor: FeedCursor?
    }

    func page(for caller: Caller, _ request: PageRequest<FeedCursor>) throws -> Page {
        let shownBefore = request.cursor?.shown ?? 0
        let limit = min(request.limit, Self.depth - shownBefore)
        let me = caller.userID
        // A large author's posts from `since` on come from the third arm, its older ones (copied
        // before it was large, or by a follow's backfill) from the stored rows: none twice.
        // (Excluding large authors from the rows instead was an anti-join that read and
        // sorted the reader's whole feed: 5 ms against 0.2 at 12,000 rows.)
        //
        // Each arm applies the filters itself and stops at the page (LIMIT): its rows are
        // all shown ones, so the top of their merge is the page, and the planner picks the
        // plan that starts fast (a backward index walk), whatever the table's statistics
        // say. Without the LIMIT it planned each arm for all its rows: with a small feed
        // table (bench/feed.sh, 2,500 rows of 3 readers, 821 pages) a sequential scan and
        // sort of the reader's 1,000 rows, 5 of the query's 6.7 ms at 1M posts.
        let visible = { (post: String, profile: String) -> SQLQuery in
            var filter: SQLQuery = " AND NOT \(unsafeSQL: post).deleted"
            filter.append(Visibility.visible(on: .feed, author: "\(post).user_id", to: caller, suspendedFlag: "\(profile).suspended"))
            return filter
        }
        var entries: SQLQuery = """
            SELECT fe.post_id AS id, fe.created_at FROM feed_entries fe JOIN posts ep ON ep.id = fe.post_id
            LEFT JOIN profiles epr ON epr.user_id = ep.user_id WHERE fe.user_id = \(me)
            """
        entries.append(visible("ep", "epr"))
        var own: SQLQuery = "SELECT o.id, o.created_at FROM posts o LEFT JOIN profiles opr ON opr.user_id = o.user_id WHERE o.user_id = \(me)"
        own.append(visible("o", "opr"))
        var large: SQLQuery = """
            SELECT lp.id, lp.created_at FROM posts lp LEFT JOIN profiles lpr ON lpr.user_id = lp.user_id
            WHERE lp.user_id = l.user_id AND lp.created_at >= l.since
            """
        large.append(visible("lp", "lpr"))
        if let cursor = request.cursor?.position {
            entries.append(cursor.before(created: "fe.created_at", id: "fe.post_id"))
            own.append(cursor.before(created: "o.created_at", id: "o.id"))
            large.append(cursor.before(created: "lp.created_at", id: "lp.id"))
        }
        let rows: SQLQuery = " LIMIT \(literal: limit + 1)"
        var query: SQLQuery = """
            SELECT \(unsafeSQL: PostShape.columns)\(PostShape.likedByMe(caller: caller)) FROM (
                (\(entries) ORDER BY fe.created_at DESC, fe.post_id DESC\(rows))
                UNION ALL
                (\(own) ORDER BY o.created_at DESC, o.id DESC\(rows))
                UNION ALL
                (SELECT m.id, m.created_at
                 FROM feed_large_authors l JOIN follows f ON f.follower_id = \(me) AND f.followee_id = l.user_id,
                 LATERAL (\(large) ORDER BY lp.created_at DESC, lp.id DESC\(rows)) m
                 ORDER BY m.created_at DESC, m.id DESC\(rows))
            ) e JOIN posts p ON p.id = e.id \(unsafeSQL: PostShape.authorJoin)
            """
        query.append(" ORDER BY e.created_at DESC, e.id DESC LIMIT \(literal: limit + 1)")
        let page = try pool.withReadConnection { connection in
            try PostService.page(from: connection.query(query), limit: limit, withLiked: true)
        }
        let shown = shownBefore + page.count
        return Page(json: page.json, nextCursor: shown < Self.depth ? page.nextCursor.map { FeedCursor(position: $0, shown: shown) } : nil)
    }
}
