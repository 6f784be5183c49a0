import Postgres

/// What a deleted account withdraws from the posts that stay: its likes of posts and of
/// comments, its comments (with the others' replies under its top-level ones, which go
/// with their thread), each with the counters after it and its event (`like_changed`,
/// `comment_like_changed`, `comment_deleted`). Rows on the posts that go are left to their
/// cascade.
enum AccountWithdrawal {
    static func likesAndComments(of userID: Int64, except gone: Set<Int64>, effects: EventEffects,
                                 on connection: PostgresConnection) throws {
        let goneIDs = PostgresArray(Array(gone))
        try effects.run(Write(
            locking: .held,
            steps: ["""
            withdrawn AS (
                DELETE FROM likes WHERE user_id = \(userID) AND NOT (post_id = ANY(\(goneIDs))) RETURNING post_id
            ), upd AS (
                UPDATE posts p SET like_count = p.like_count - 1 FROM withdrawn WHERE p.id = withdrawn.post_id
                RETURNING p.id, p.user_id, p.parent_id, p.like_count
            )
            """],
            events: [(.likeChanged, EventTable.likeChanged.cte([
                "seq": "row_number() OVER (ORDER BY upd.id)", "post": "upd.id", "parent": "upd.parent_id",
                "post_author": "upd.user_id", "actor": "\(userID)", "liked": "false", "like_count": "upd.like_count",
            ], "FROM upd"))],
            answer: """
            SELECT 1
            """), on: connection)
        try effects.run(Write(
            locking: .held,
            steps: ["""
            withdrawn AS (
                DELETE FROM comment_likes cl USING comments c
                WHERE cl.user_id = \(userID) AND c.id = cl.comment_id AND NOT (c.post_id = ANY(\(goneIDs)))
                RETURNING cl.comment_id
            ), upd AS (
                UPDATE comments c SET like_count = c.like_count - 1 FROM withdrawn WHERE c.id = withdrawn.comment_id
                RETURNING c.id, c.post_id, c.user_id, c.like_count
            )
            """],
            events: [(.commentLikeChanged, EventTable.commentLikeChanged.cte([
                "seq": "row_number() OVER (ORDER BY upd.post_id, upd.id)", "comment": "upd.id", "post": "upd.post_id",
                "post_parent": "p.parent_id", "comment_author": "upd.user_id", "actor": "\(userID)", "liked": "false",
                "like_count": "upd.like_count",
            ], "FROM upd JOIN posts p ON p.id = upd.post_id"))],
            answer: """
            SELECT 1
            """), on: connection)
        // Every row deleted here is counted here, so the post's count and the threads'
        // `reply_count` stay exact.
        try effects.run(Write(
            locking: .held,
            steps: ["""
            own AS (
                SELECT id FROM comments WHERE user_id = \(userID) AND NOT (post_id = ANY(\(goneIDs)))
            ), withdrawn AS (
                DELETE FROM comments WHERE id IN (SELECT id FROM own) OR reply_to IN (SELECT id FROM own)
                RETURNING id, post_id, reply_to
            ), threads AS (
                SELECT reply_to AS id, count(*) AS n FROM withdrawn
                WHERE reply_to IS NOT NULL AND reply_to NOT IN (SELECT id FROM withdrawn) GROUP BY reply_to
            ), thread_upd AS (
                UPDATE comments c SET reply_count = c.reply_count - threads.n FROM threads WHERE c.id = threads.id
            ), counts AS (
                SELECT post_id, count(*) AS n FROM withdrawn GROUP BY post_id
            ), upd AS (
                UPDATE posts p SET comment_count = p.comment_count - counts.n FROM counts WHERE p.id = counts.post_id
                RETURNING p.id, p.parent_id, p.comment_count
            )
            """],
            events: [(.commentDeleted, EventTable.commentDeleted.cte([
                "seq": "row_number() OVER (ORDER BY upd.id, withdrawn.id)", "comment": "withdrawn.id", "post": "upd.id",
                "post_parent": "upd.parent_id", "actor": "\(userID)", "comment_count": "upd.comment_count",
                "reply_to": "withdrawn.reply_to",
            ], "FROM withdrawn JOIN upd ON upd.id = withdrawn.post_id"))],
            answer: """
            SELECT 1
            """), on: connection)
    }
}
