import Foundation
import Postgres

/// Comment likes (API.md "Comment likes"): like and unlike, idempotent, one row per
/// (comment, user), each one statement that changes the row, the comment's `like_count`
/// and records `comment.liked` together, after the lock of the comment's post (the change
/// carries the count: see `ChangeLog`). A repeat that changes nothing records nothing.
struct CommentLikeService: Sendable {
    let pool: ConnectionPool

    struct State: Sendable {
        let liked: Bool
        let likeCount: Int
    }

    /// The comment's like state after the action; nil when there is no such comment (or
    /// its author, or its post's, is suspended). Liking across a block is 403; unliking
    /// stays allowed (a like may be taken back, never given).
    func set(_ liked: Bool, comment id: UUID, by caller: Caller) throws -> State? {
        if liked, !caller.relations.blocked.isEmpty { try checkInteraction(with: id, by: caller) }
        let user = caller.userID
        let delete: SQLQuery = liked ? "SELECT NULL::uuid AS comment_id WHERE false" : """
            DELETE FROM comment_likes WHERE comment_id = (SELECT id FROM target) AND user_id = \(user)
            AND \(unsafeSQL: ChangeLog.gate) RETURNING comment_id
            """
        let insert: SQLQuery = !liked ? "SELECT NULL::uuid AS comment_id WHERE false" : """
            INSERT INTO comment_likes (comment_id, user_id) SELECT id, \(user) FROM target WHERE \(unsafeSQL: ChangeLog.gate)
            ON CONFLICT DO NOTHING RETURNING comment_id
            """
        let query: SQLQuery = """
            WITH target AS (
                SELECT c.id, c.post_id, c.like_count FROM comments c JOIN posts p ON p.id = c.post_id
                WHERE c.id = \(id)\(Visibility.activeAuthor(of: "c.user_id"))\(Visibility.activeAuthor(of: "p.user_id"))
            ),
            lock AS (\(ChangeLog.lock(postIn: "target"))),
            del AS (\(delete)),
            ins AS (\(insert)),
            upd AS (
                UPDATE comments SET like_count = like_count + (SELECT count(*) FROM ins) - (SELECT count(*) FROM del)
                WHERE id = (SELECT id FROM target) AND (EXISTS (SELECT 1 FROM ins) OR EXISTS (SELECT 1 FROM del))
                RETURNING id, post_id, like_count
            ),
            recorded AS (\(ChangeLog.record(ChangeRecord(
                kind: .commentLiked, postID: "upd.post_id", parentID: "p.parent_id", userID: "\(user)",
                data: [("comment_id", "upd.id"), ("liked", liked ? "true" : "false"), ("like_count", "upd.like_count")],
                source: "FROM upd JOIN posts p ON p.id = upd.post_id"))))
            SELECT (SELECT count(*) FROM target) AS found,
                   coalesce((SELECT like_count FROM upd), (SELECT like_count FROM target)) AS like_count
            """
        let row: PostgresRow
        do {
            row = try pool.withRetriedStatement { try $0.query(query).firstRow() }
        } catch let error as PostgresError where error.sqlState == .foreignKeyViolation {
            return nil  // the comment was deleted while we liked it
        }
        guard try row.decode("found", as: Int.self) == 1 else { return nil }
        return State(liked: liked, likeCount: try row.decode("like_count"))
    }

    /// 403 when the comment's author or its post's author is on the other side of a block
    /// (one lookup, only for a caller with blocks; no such comment is the write's own 404).
    private func checkInteraction(with id: UUID, by caller: Caller) throws {
        let row = try pool.withConnection { connection in
            try connection.query("""
                SELECT c.user_id, p.user_id AS post_user_id FROM comments c JOIN posts p ON p.id = c.post_id WHERE c.id = \(id)
                """).first
        }
        guard let row else { return }
        try Visibility.checkInteraction(with: try row.decode("user_id", as: Int64.self), by: caller)
        try Visibility.checkInteraction(with: try row.decode("post_user_id", as: Int64.self), by: caller)
    }
}
