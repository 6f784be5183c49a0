import Foundation
import Postgres

/// Comments: a post's page (each with its author's whole profile, one JOIN), add and delete,
/// each keeping the post's `comment_count` in the same statement. The writes are `add` and
/// `delete`: the one place each kind of change happens.
struct CommentService: Sendable {
    let pool: ConnectionPool

    static let maxLength = 2200

    struct Page: Sendable {
        let commentCount: Int
        let json: [UInt8]
        let nextCursor: CommentCursor?
    }

    /// Oldest first; nil when there is no such post (or the caller and its author blocked
    /// one another). Comments of users the caller blocked, was blocked by or muted are left out.
    func page(of postID: Int64, _ request: PageRequest<CommentCursor>, caller: Caller?) throws -> Page? {
        var page: SQLQuery = """
            SELECT \(unsafeSQL: CommentShape.columns) FROM comments c \(unsafeSQL: CommentShape.authorJoin)
            WHERE c.post_id = post.id
            """
        page.append(Visibility.excluding("c.user_id", for: caller, inList: true))
        page.append(Visibility.activeAuthor)
        if let cursor = request.cursor { page.append(cursor.after) }
        page.append(" ORDER BY c.created_at, c.id LIMIT \(literal: request.limit + 1)")
        let query: SQLQuery = """
            SELECT page.*, post.comment_count
            FROM (
                SELECT id, comment_count FROM posts
                WHERE id = \(postID)\(Visibility.excluding("user_id", for: caller, inList: false))\(Visibility.activeAuthor(of: "posts.user_id"))
            ) post
            LEFT JOIN LATERAL (\(page)) page ON true
            ORDER BY page.created_at, page.id
            """
        return try pool.withConnection { connection -> Page? in
            let rows = try connection.query(query).rows
            guard let first = rows.first else { return nil }
            let comments = rows.filter { $0.withBytes(at: 0) { $0 != nil } }
            let (json, last) = try RowJSON.page(comments, limit: request.limit) { row, out in
                try CommentShape.append(row, to: &out)
            }
            let next = try last.map(CommentShape.cursor(after:))
            return Page(commentCount: try first.decode("comment_count"), json: json, nextCursor: next)
        }
    }

    /// Adds a comment (trimmed, 1...2,200 characters: 422 otherwise): the comment, or the
    /// first answer again for a retried `Idempotency-Key`. 404 when there is no post.
    func add(_ text: String, to postID: Int64, by caller: Caller, idempotency: IdempotentRequest?) throws -> Created {
        let body = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...Self.maxLength).contains(body.count) else {
            throw APIError.invalid("body must be 1 to \(Self.maxLength) characters")
        }
        try Visibility.checkInteraction(withPost: postID, by: caller, pool: pool)
        let query: SQLQuery = """
            WITH lock AS (\(ChangeLog.lock(posts: [postID]))),
            post AS (
                UPDATE posts SET comment_count = comment_count + 1
                WHERE id = \(postID) AND NOT deleted AND \(unsafeSQL: ChangeLog.gate)\(Visibility.activeAuthor(of: "posts.user_id"))
                RETURNING id, parent_id, comment_count
            ),
            c AS (INSERT INTO comments (post_id, user_id, body) SELECT id, \(caller.userID), \(body) FROM post RETURNING *),
            recorded AS (\(ChangeLog.record(ChangeRecord(
                kind: .commentCreated, postID: "post.id", parentID: "post.parent_id", userID: "\(caller.userID)",
                data: [("comment", "\(unsafeSQL: CommentShape.json)"), ("comment_count", "post.comment_count")],
                source: "FROM post, c \(unsafeSQL: CommentShape.authorJoin)"))))
            SELECT \(unsafeSQL: CommentShape.columns) FROM c \(unsafeSQL: CommentShape.authorJoin)
            """
        let insert = { (connection: PostgresConnection) throws -> [UInt8] in
            guard let row = try connection.query(query).first else {
                if try PostService.isTombstone(postID, on: connection) { throw PostService.tombstoneGone }
                throw APIError.notFound("no such post")
            }
            var comment: [UInt8] = []
            try CommentShape.append(row, to: &comment)
            return comment
        }
        do {
            guard let idempotency else { return .created(try pool.withRetriedStatement(insert)) }
            return try pool.withTransaction { connection in
                if let replay = try idempotency.replay(on: connection) { return .replayed(replay) }
                let comment = try insert(connection)
                try idempotency.record(comment, as: "comment", on: connection)
                return .created(comment)
            }
        } catch let error as PostgresError where error.sqlState == .foreignKeyViolation {
            throw APIError.notFound("no such post")
        }
    }

    /// Deletes the caller's own comment: 403 for another's, 404 for none (or a malformed id).
    func delete(_ id: UUID, by caller: Caller) throws {
        let row = try pool.withRetriedStatement { try $0.query(Self.deletion(of: id, by: caller, authorOnly: true)).firstRow() }
        guard let author = try row.decode("author", as: Int64?.self) else { throw APIError.notFound("no such comment") }
        guard author == caller.userID else { throw APIError.forbidden("only its author may delete a comment") }
        // Deleted by a request of its author's own an instant before this one.
        guard try row.decode("deleted", as: Int.self) == 1 else { throw APIError.notFound("no such comment") }
    }

    /// A moderator's removal of anyone's comment, in the moderator's transaction: 404 for none.
    static func remove(_ id: UUID, by moderator: Caller, on connection: PostgresConnection) throws {
        let row = try connection.query(deletion(of: id, by: moderator, authorOnly: false)).firstRow()
        guard try row.decode("deleted", as: Int.self) == 1 else { throw APIError.notFound("no such comment") }
    }

    /// The delete, its count and its change in one statement; `authorOnly`: only the
    /// caller's own. Answers the comment's author (NULL: none) and how many were deleted.
    private static func deletion(of id: UUID, by caller: Caller, authorOnly: Bool) -> SQLQuery {
        """
                WITH target AS (SELECT id, post_id, user_id FROM comments WHERE id = \(id)),
                mine AS (SELECT post_id FROM target WHERE NOT \(authorOnly) OR user_id = \(caller.userID)),
                lock AS (\(ChangeLog.lock(postIn: "mine"))),
                del AS (
                    DELETE FROM comments c USING target
                    WHERE c.id = target.id AND (NOT \(authorOnly) OR target.user_id = \(caller.userID)) AND \(unsafeSQL: ChangeLog.gate)
                    RETURNING c.post_id
                ),
                upd AS (
                    UPDATE posts SET comment_count = comment_count - 1 WHERE id = (SELECT post_id FROM del)
                    RETURNING id, parent_id, comment_count
                ),
                recorded AS (\(ChangeLog.record(ChangeRecord(
                    kind: .commentDeleted, postID: "upd.id", parentID: "upd.parent_id", userID: "\(caller.userID)",
                    data: [("comment_id", "\(id)"), ("comment_count", "upd.comment_count")], source: "FROM upd"))))
                SELECT (SELECT user_id FROM target) AS author, (SELECT count(*) FROM del) AS deleted
                """
    }
}
