import Foundation
import Postgres

/// The SQL behind `DemoSeed`: rows of a kind in one statement over bound arrays, each with
/// its events as the routes' writes make them (`EventEffects`), each carrying the count as
/// of its own row (the n-th like of a post says `like_count` n, as the plan ranks it), as if
/// the rows had come one by one. The caller passes slices, so no statement is long enough
/// to meet the pool's statement timeout.
struct DemoRows {
    let effects: EventEffects
    let clock: ServerClock
    let connection: PostgresConnection

    /// The new users' ids, in the plan's order.
    static func insertUsers(_ users: [DemoPlan.User], clock: ServerClock, on connection: PostgresConnection) throws -> [Int64] {
        guard !users.isEmpty else { return [] }
        return try connection.query("""
            WITH input AS (
                SELECT * FROM unnest(\(PostgresArray(users.map(\.username))), \(PostgresArray(users.map(\.fullName))))
                    WITH ORDINALITY AS i(username, full_name, k)
            ), u AS (
                INSERT INTO users (email, created_at) SELECT username || '@example.com', \(clock.now) FROM input ORDER BY k
                RETURNING id, email
            ), p AS (
                INSERT INTO profiles (user_id, username, full_name, bio, created_at)
                SELECT u.id, input.username, input.full_name, 'A demo account', \(clock.now)
                FROM u JOIN input ON u.email = input.username || '@example.com'
                RETURNING user_id, username
            )
            SELECT p.user_id FROM p JOIN input USING (username) ORDER BY input.k
            """).rows.map { try $0.decode("user_id") }
    }

    /// Ids for the plan's posts, in its order, taken before any post is written so that a
    /// child can name its parent whichever statement writes either.
    static func reservePostIDs(count: Int, on connection: PostgresConnection) throws -> [Int64] {
        guard count > 0 else { return [] }
        return try connection.query("""
            SELECT nextval(pg_get_serial_sequence('posts', 'id')) AS id FROM generate_series(1, \(Int64(count))) ORDER BY 1
            """).rows.map { try $0.decode("id") }
    }

    /// Some of the plan's posts (`posts` keeps the plan's indices), the oldest first: the
    /// last one of the plan is a minute old, each earlier one a minute older. Their authors'
    /// `posts_count` moves with them.
    func insertPosts(_ posts: ArraySlice<DemoPlan.Post>, of plan: [DemoPlan.Post], ids: [Int64], authors: [Int64]) throws {
        guard !posts.isEmpty else { return }
        let tags = try Hashtags.resolve(many: posts.map { [("title", $0.title), ("summary", $0.summary), ("body", $0.body)] },
                                        on: connection)
        let tagged = zip(posts.indices, tags).flatMap { index, tags in Hashtags.names(tags).map { (ids[index], $0) } }
        // Arrays carry no NULL here: 0 and '' stand for none.
        try effects.run(Write(
            locking: .held,
            steps: ["""
            input AS (
                SELECT * FROM unnest(\(PostgresArray(posts.indices.map { ids[$0] })),
                                     \(PostgresArray(posts.map { $0.parent.map { ids[$0] } ?? 0 })),
                                     \(PostgresArray(posts.map { $0.parent.map { authors[plan[$0].author] } ?? 0 })),
                                     \(PostgresArray(posts.map { Int64($0.siblingRank ?? 0) })),
                                     \(PostgresArray(posts.map { authors[$0.author] })),
                                     \(PostgresArray(posts.map(\.title))), \(PostgresArray(posts.map(\.summary))),
                                     \(PostgresArray(posts.map(\.body))), \(PostgresArray(posts.map { $0.locationTag ?? "" })),
                                     \(PostgresArray(posts.indices.map { Int64(ids.count - $0) })),
                                     \(PostgresArray(tags.map { Hashtags.column($0) ?? "" })))
                    WITH ORDINALITY AS i(id, parent_id, parent_author, sibling_rank, user_id, title, summary, body, location_tag,
                                         minutes_ago, tags, k)
            ), p AS (
                INSERT INTO posts (id, user_id, parent_id, title, summary, body, location_tag, created_at, tags)
                SELECT id, user_id, nullif(parent_id, 0), title, summary, body, nullif(location_tag, ''),
                       \(clock.now) - minutes_ago * interval '1 minute', nullif(tags, '')::json
                FROM input ORDER BY k
                RETURNING *
            ), named_tags AS (
                SELECT * FROM tag_ids(\(PostgresArray(Hashtags.names(tags.flatMap { $0 })))::text[], \(clock.now))
            ), post_tagged AS (
                INSERT INTO post_tags (tag_id, post_id, author_id, created_at)
                SELECT t.tag_id, p.id, p.user_id, p.created_at
                FROM unnest(\(PostgresArray(tagged.map(\.0))), \(PostgresArray(tagged.map(\.1)))) AS x(post_id, name)
                JOIN p ON p.id = x.post_id JOIN named_tags t ON t.tag_name = x.name
            ), counted AS (
                UPDATE profiles pr SET posts_count = pr.posts_count + n.n
                FROM (SELECT user_id, count(*) AS n FROM p GROUP BY user_id ORDER BY user_id) n WHERE pr.user_id = n.user_id
                RETURNING pr.*
            )
            """],
            events: [(.postCreated, EventTable.postCreated.cte([
                "seq": "input.k", "post": "p.id", "author": "p.user_id", "parent": "p.parent_id",
                "parent_author": "nullif(input.parent_author, 0)", "parent_child_count": "nullif(input.sibling_rank, 0)",
                "created_at": "p.created_at", "json": "\(unsafeSQL: PostShape.json)", "mentioned": "NULL",
            ], "FROM p JOIN input USING (id) \(unsafeSQL: PostShape.authorJoin)"))], profilesCounted: "counted",
            answer: """
            SELECT 1
            """), on: connection)
    }

    func insertLikes(_ likes: ArraySlice<DemoPlan.Like>, postIDs: [Int64], authors: [Int64]) throws {
        guard !likes.isEmpty else { return }
        try effects.run(Write(
            locking: .held,
            steps: ["""
            input AS (
                SELECT * FROM unnest(\(PostgresArray(likes.map { postIDs[$0.post] })),
                                     \(PostgresArray(likes.map { authors[$0.user] })),
                                     \(PostgresArray(likes.map { Int64($0.rank) })))
                    WITH ORDINALITY AS i(post_id, user_id, rank, k)
            ), l AS (
                INSERT INTO likes (post_id, user_id, created_at) SELECT post_id, user_id, \(clock.now) FROM input ORDER BY k
                RETURNING post_id, user_id
            )
            """],
            events: [(.likeChanged, EventTable.likeChanged.cte([
                "seq": "input.k", "post": "l.post_id", "parent": "p.parent_id", "post_author": "p.user_id",
                "actor": "l.user_id", "liked": "true", "like_count": "input.rank",
            ], "FROM l JOIN input USING (post_id, user_id) JOIN posts p ON p.id = l.post_id"))],
            answer: """
            SELECT 1
            """), on: connection)
    }

    /// Some of the plan's comments, a second apart, the plan's last one a second old.
    func insertComments(_ comments: ArraySlice<DemoPlan.Comment>, of plan: [DemoPlan.Comment], ids: [UUID],
                        postIDs: [Int64], authors: [Int64]) throws {
        guard !comments.isEmpty else { return }
        // uuid arrays as text: '' stands for a top-level comment's reply_to.
        try effects.run(Write(
            locking: .held,
            steps: ["""
            input AS MATERIALIZED (
                SELECT * FROM unnest(
                    \(PostgresArray(comments.indices.map { ids[$0].uuidString })),
                    \(PostgresArray(comments.map { $0.replyTo.map { ids[$0].uuidString } ?? "" })),
                    \(PostgresArray(comments.map { $0.replyTo.map { authors[plan[$0].author] } ?? 0 })),
                    \(PostgresArray(comments.map { postIDs[$0.post] })), \(PostgresArray(comments.map { authors[$0.author] })),
                    \(PostgresArray(comments.map(\.body))), \(PostgresArray(comments.map { Int64($0.rank) })),
                    \(PostgresArray(comments.indices.map { Int64(plan.count - $0) })))
                    WITH ORDINALITY AS i(id, reply_to, reply_to_author, post_id, user_id, body, rank, seconds_ago, k)
            ), c AS (
                INSERT INTO comments (id, reply_to, post_id, user_id, body, created_at)
                SELECT id::uuid, nullif(reply_to, '')::uuid, post_id, user_id, body, \(clock.now) - seconds_ago * interval '1 second'
                FROM input ORDER BY k
                RETURNING *
            )
            """],
            events: [(.commentCreated, EventTable.commentCreated.cte([
                "seq": "input.k", "comment": "c.id", "post": "c.post_id", "post_parent": "p.parent_id",
                "post_author": "p.user_id", "reply_to": "c.reply_to", "reply_to_author": "nullif(input.reply_to_author, 0)",
                "actor": "c.user_id", "json": "\(unsafeSQL: CommentShape.json)", "comment_count": "input.rank",
                "mentioned": "NULL",
            ], "FROM c JOIN input ON input.id::uuid = c.id \(unsafeSQL: CommentShape.authorJoin) JOIN posts p ON p.id = c.post_id"))],
            answer: """
            SELECT 1
            """), on: connection)
    }

    func insertCommentLikes(_ likes: ArraySlice<DemoPlan.CommentLike>, commentIDs: [UUID], authors: [Int64]) throws {
        guard !likes.isEmpty else { return }
        try effects.run(Write(
            locking: .held,
            steps: ["""
                input AS (
                    SELECT * FROM unnest(\(PostgresArray(likes.map { commentIDs[$0.comment].uuidString })),
                                         \(PostgresArray(likes.map { authors[$0.user] })),
                                         \(PostgresArray(likes.map { Int64($0.rank) })))
                        WITH ORDINALITY AS i(comment_id, user_id, rank, k)
                )
                """, """
                l AS (
                    INSERT INTO comment_likes (comment_id, user_id, created_at)
                    SELECT comment_id::uuid, user_id, \(clock.now) FROM input ORDER BY k
                    RETURNING comment_id, user_id
                )
                """],
            events: [(.commentLikeChanged, EventTable.commentLikeChanged.cte([
                "seq": "input.k", "comment": "l.comment_id", "post": "c.post_id", "post_parent": "p.parent_id",
                "comment_author": "c.user_id", "actor": "l.user_id", "liked": "true", "like_count": "input.rank",
            ], """
                FROM l JOIN input ON input.comment_id::uuid = l.comment_id AND input.user_id = l.user_id
                JOIN comments c ON c.id = l.comment_id JOIN posts p ON p.id = c.post_id
                """))],
            answer: "SELECT 1"), on: connection)
    }

    /// The counters the rows imply, in the rows themselves (API.md: counts kept in the row).
    static func settleCounters(of postIDs: ArraySlice<Int64>, on connection: PostgresConnection) throws {
        guard !postIDs.isEmpty else { return }
        try connection.query("""
            UPDATE comments c SET
                reply_count = (SELECT count(*) FROM comments r WHERE r.reply_to = c.id),
                like_count = (SELECT count(*) FROM comment_likes l WHERE l.comment_id = c.id)
            WHERE c.post_id = ANY(\(PostgresArray(Array(postIDs))))
            """)
        try connection.query("""
            UPDATE posts p SET
                child_count = (SELECT count(*) FROM posts c WHERE c.parent_id = p.id),
                like_count = (SELECT count(*) FROM likes l WHERE l.post_id = p.id),
                comment_count = (SELECT count(*) FROM comments m WHERE m.post_id = p.id)
            WHERE p.id = ANY(\(PostgresArray(Array(postIDs))))
            """)
    }
}
