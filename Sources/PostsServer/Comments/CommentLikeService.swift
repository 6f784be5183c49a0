import Foundation
import Postgres

/// Comment likes (API.md "Comment likes"): like and unlike, idempotent, one row per
/// (comment, user), each one statement that changes the row and the comment's
/// `like_count` together, after the lock of the comment's post (the change carries the
/// count: see `ChangeLog`), says what happened (`comment_like_changed`) and records what
/// follows (`EventEffects`). A repeat that changes nothing records nothing.
struct CommentLikeService: Sendable {
    var pool: ConnectionPool
    let effects: EventEffects

    struct State: Sendable {
        let liked: Bool
        let likeCount: Int
    }

    /// The comment's like state after the action: 404 when there is no such comment (or it
    /// cannot be read: its author, or its post's, is suspended); liking across a block (with
    /// either) is 403, unliking stays allowed (`Visibility.check`).
    func set(_ liked: Bool, comment id: UUID, by caller: Caller) throws -> State {
        let user = caller.userID
        let delete: SQLQuery = liked ? "SELECT NULL::uuid AS comment_id WHERE false" : """
            DELETE FROM comment_likes WHERE comment_id = (SELECT id FROM target) AND user_id = \(user) RETURNING comment_id
            """
        let insert: SQLQuery = !liked ? "SELECT NULL::uuid AS comment_id WHERE false" : """
            INSERT INTO comment_likes (comment_id, user_id, created_at) SELECT id, \(user), \(effects.clock.now) FROM target WHERE NOT target.blocked
            ON CONFLICT DO NOTHING RETURNING comment_id
            """
        let write = Write(
            locking: .postOf(located: "SELECT post_id FROM comments WHERE id = \(id)"),
            // The post as it is once its lock is ours (a move that committed meanwhile).
            target: Write.Target(statement: """
                SELECT c.id, c.post_id, c.user_id, c.like_count, p.parent_id, false AS tombstone,
                       \(Visibility.blocked(author: "c.user_id", from: caller)) OR \(Visibility.blocked(author: "p.user_id", from: caller)) AS blocked
                FROM comments c JOIN posts p ON p.id = c.post_id
                WHERE c.id = \(id)\(Visibility.actable(author: "c.user_id"))\(Visibility.actable(author: "p.user_id"))
                """, tail: "FOR KEY SHARE OF p"),
            steps: [
                "del AS (\(delete))",
                "ins AS (\(insert))",
                """
                upd AS (
                    UPDATE comments SET like_count = like_count + (SELECT count(*) FROM ins) - (SELECT count(*) FROM del)
                    WHERE id = (SELECT id FROM target) AND (EXISTS (SELECT 1 FROM ins) OR EXISTS (SELECT 1 FROM del))
                    RETURNING id, post_id, like_count
                )
                """,
            ],
            events: [(.commentLikeChanged, EventTable.commentLikeChanged.cte([
                "seq": "1", "comment": "upd.id", "post": "upd.post_id", "post_parent": "(SELECT parent_id FROM target)",
                "comment_author": "target.user_id", "actor": "\(user)", "liked": "\(liked)", "like_count": "upd.like_count",
            ], "FROM upd, target"))],
            answer: """
                SELECT \(Write.refusal), coalesce((SELECT like_count FROM upd), (SELECT like_count FROM target)) AS like_count
                """)
        let row: PostgresRow
        do {
            row = try pool.withRetriedStatement { try effects.run(write, on: $0).firstRow() }
        } catch let error as PostgresError where error.sqlState == .foreignKeyViolation {
            throw APIError.notFound(Visibility.Interaction.commentLike.missing)  // deleted while we liked it
        }
        try Visibility.check(.commentLike, Visibility.Target(refusal: row, gives: liked))
        return State(liked: liked, likeCount: try row.decode("like_count"))
    }
}
