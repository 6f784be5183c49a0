import Foundation
import Postgres

/// Comment likes (API.md "Comment likes"): like and unlike, idempotent, one row per
/// (comment, user), each one statement that changes the row and the comment's
/// `like_count` together, after the lock of the comment's post (the change carries the
/// count: see `ChangeLog`), and says what happened (`CommentLikeChanged`). A repeat that
/// changes nothing records nothing.
struct CommentLikeService: Sendable {
    let writes: WritePath

    struct State: Sendable {
        let liked: Bool
        let likeCount: Int
    }

    /// The comment's like state after the action; nil when there is no such comment (or
    /// its author, or its post's, is suspended). Liking across a block is 403; unliking
    /// stays allowed (a like may be taken back, never given).
    func set(_ liked: Bool, comment id: UUID, by caller: Caller) throws -> State? {
        do {
            return try writes.run { connection in try write(liked, comment: id, by: caller, on: connection) }
        } catch let error as PostgresError where error.sqlState == .foreignKeyViolation {
            return nil  // the comment was deleted while we liked it
        }
    }

    private func write(_ liked: Bool, comment id: UUID, by caller: Caller,
                       on connection: PostgresConnection) throws -> Written<State?> {
        let user = caller.userID
        let delete: SQLQuery = liked ? "SELECT NULL::uuid AS comment_id WHERE false" : """
            DELETE FROM comment_likes WHERE comment_id = (SELECT id FROM target) AND user_id = \(user)
            AND \(unsafeSQL: WriteLocks.gate) RETURNING comment_id
            """
        let insert: SQLQuery = !liked ? "SELECT NULL::uuid AS comment_id WHERE false" : """
            INSERT INTO comment_likes (comment_id, user_id) SELECT id, \(user) FROM target
            WHERE \(unsafeSQL: WriteLocks.gate) AND NOT target.blocked
            ON CONFLICT DO NOTHING RETURNING comment_id
            """
        let query: SQLQuery = """
            WITH target AS (
                SELECT c.id, c.post_id, c.user_id, c.like_count, p.parent_id,
                       c.user_id = ANY(\(caller.relations.blockedParameter)) OR p.user_id = ANY(\(caller.relations.blockedParameter)) AS blocked
                FROM comments c JOIN posts p ON p.id = c.post_id
                WHERE c.id = \(id)\(Visibility.notSuspended( "c.user_id"))\(Visibility.notSuspended( "p.user_id"))
            ),
            lock AS (\(WriteLocks.post(in: "target"))),
            del AS (\(delete)),
            ins AS (\(insert)),
            upd AS (
                UPDATE comments SET like_count = like_count + (SELECT count(*) FROM ins) - (SELECT count(*) FROM del)
                WHERE id = (SELECT id FROM target) AND (EXISTS (SELECT 1 FROM ins) OR EXISTS (SELECT 1 FROM del))
                RETURNING id, post_id, like_count
            )
            SELECT (SELECT count(*) FROM target) AS found, coalesce((SELECT blocked FROM target), false) AS blocked,
                   (SELECT user_id FROM target) AS author, (SELECT post_id FROM target) AS post_id,
                   (SELECT parent_id FROM posts WHERE id = (SELECT post_id FROM upd)) AS parent_id,
                   coalesce((SELECT like_count FROM upd), (SELECT like_count FROM target)) AS like_count,
                   (SELECT count(*) FROM upd) AS changed
            """
        let row = try connection.query(query).firstRow()
        guard try row.decode("found", as: Int.self) == 1 else { return Written(nil) }
        if liked, try row.decode("blocked", as: Bool.self) { throw Visibility.blockedInteraction }
        let state = State(liked: liked, likeCount: try row.decode("like_count"))
        guard try row.decode("changed", as: Int.self) == 1 else { return Written(state) }
        return Written(state, [.commentLikeChanged(CommentLikeChanged(
            comment: id, post: try row.decode("post_id"), postParent: try row.decode("parent_id"),
            commentAuthor: try row.decode("author"), actor: user, liked: liked, likeCount: state.likeCount))])
    }
}
