import Foundation
import Postgres

/// What a deleted account withdraws from the posts that stay: its likes of posts and of
/// comments, its comments (with the others' replies under its top-level ones, which go
/// with their thread), each with the counters after it, as events (`like.changed`,
/// `comment.liked`, `comment.deleted`). Rows on the posts that go are left to their cascade.
enum AccountWithdrawal {
    static func likesAndComments(of userID: Int64, except gone: Set<Int64>,
                                 on connection: PostgresConnection) throws -> [DomainEvent] {
        let goneIDs = PostgresArray(Array(gone))
        let likes = try connection.query("""
            WITH withdrawn AS (
                DELETE FROM likes WHERE user_id = \(userID) AND NOT (post_id = ANY(\(goneIDs))) RETURNING post_id
            )
            UPDATE posts p SET like_count = p.like_count - 1 FROM withdrawn WHERE p.id = withdrawn.post_id
            RETURNING p.id, p.user_id, p.parent_id, p.like_count
            """).rows.sorted { try $0.decode("id", as: Int64.self) < $1.decode("id", as: Int64.self) }
        let commentLikes = try connection.query("""
            WITH withdrawn AS (
                DELETE FROM comment_likes cl USING comments c
                WHERE cl.user_id = \(userID) AND c.id = cl.comment_id AND NOT (c.post_id = ANY(\(goneIDs)))
                RETURNING cl.comment_id
            ), upd AS (
                UPDATE comments c SET like_count = c.like_count - 1 FROM withdrawn WHERE c.id = withdrawn.comment_id
                RETURNING c.id, c.post_id, c.user_id, c.like_count
            )
            SELECT upd.*, p.parent_id FROM upd JOIN posts p ON p.id = upd.post_id ORDER BY upd.post_id, upd.id
            """).rows
        // Every row deleted here is counted here, so the post's count and the threads'
        // `reply_count` stay exact.
        let comments = try connection.query("""
            WITH own AS (
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
            SELECT withdrawn.id, withdrawn.reply_to, upd.id AS post_id, upd.parent_id, upd.comment_count
            FROM withdrawn JOIN upd ON upd.id = withdrawn.post_id ORDER BY upd.id, withdrawn.id
            """).rows
        var events: [DomainEvent] = []
        for row in likes {
            events.append(.likeChanged(LikeChanged(
                post: try row.decode("id"), parent: try row.decode("parent_id"), postAuthor: try row.decode("user_id"),
                actor: userID, liked: false, likeCount: Int(try row.decode("like_count", as: Int32.self)))))
        }
        for row in commentLikes {
            events.append(.commentLikeChanged(CommentLikeChanged(
                comment: try row.decode("id"), post: try row.decode("post_id"), postParent: try row.decode("parent_id"),
                commentAuthor: try row.decode("user_id"), actor: userID, liked: false,
                likeCount: Int(try row.decode("like_count", as: Int32.self)))))
        }
        for row in comments {
            events.append(.commentDeleted(CommentDeleted(
                comment: try row.decode("id"), post: try row.decode("post_id"), postParent: try row.decode("parent_id"),
                actor: userID, commentCount: Int(try row.decode("comment_count", as: Int32.self)),
                replyTo: try row.decode("reply_to"))))
        }
        return events
    }
}
