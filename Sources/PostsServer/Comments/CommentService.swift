import Foundation
import HTTP
import Postgres

/// Comments: a post's page (each with its author's whole profile, one JOIN), add and delete,
/// each keeping the post's `comment_count` in the same statement. The writes are `add` and
/// `delete`: the one place each kind of change happens.
struct CommentService: Sendable {
    let pool: ConnectionPool

    static let maxLength = 2200

    /// The comment's columns, then its author's profile, in the order `CommentRows` reads
    /// (named apart from the profile's own `user_id` and `created_at`, to sort by them).
    private static let columns =
        "c.id AS comment_id, c.post_id, c.user_id AS author_id, c.body, c.created_at AS commented_at, \(ProfileRows.columns)"

    struct Page: Sendable {
        let commentCount: Int
        let json: [UInt8]
        let nextCursor: CommentCursor?
    }

    /// Oldest first; nil when there is no such post.
    func page(of postID: Int64, _ request: PageRequest<CommentCursor>) throws -> Page? {
        var page: SQLQuery = """
            SELECT \(unsafeSQL: Self.columns) FROM comments c JOIN profiles pr ON pr.user_id = c.user_id
            WHERE c.post_id = post.id
            """
        if let cursor = request.cursor { page.append(cursor.after) }
        page.append(" ORDER BY c.created_at, c.id LIMIT \(request.limit + 1)")
        let query: SQLQuery = """
            SELECT page.*, post.comment_count FROM (SELECT id, comment_count FROM posts WHERE id = \(postID)) post
            LEFT JOIN LATERAL (\(page)) page ON true
            ORDER BY page.commented_at, page.comment_id
            """
        return try pool.withConnection { connection -> Page? in
            let rows = try connection.query(query).rows
            guard let first = rows.first else { return nil }
            let comments = rows.filter { $0.withBytes(at: 0) { $0 != nil } }
            let (json, last) = try RowJSON.page(comments, limit: request.limit) { row, out in
                try CommentRows.append(row, to: &out)
            }
            let next = try last.map(CommentRows.cursor(after:))
            return Page(commentCount: try first.decode("comment_count"), json: json, nextCursor: next)
        }
    }

    /// Adds a comment (trimmed, 1...2,200 characters: 422 otherwise); answers 201 with it,
    /// or the first answer again for a retried `Idempotency-Key`. 404 when there is no post.
    func add(_ text: String, to postID: Int64, by caller: Caller, idempotency: IdempotentRequest?) throws -> Response {
        let body = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...Self.maxLength).contains(body.count) else {
            throw HTTPError(.unprocessableEntity, message: "body must be 1 to \(Self.maxLength) characters")
        }
        let query: SQLQuery = """
            WITH lock AS (\(ChangeLog.lock(posts: [postID]))),
            post AS (
                UPDATE posts SET comment_count = comment_count + 1 WHERE id = \(postID) AND (SELECT count(*) FROM lock) >= 0
                RETURNING id, parent_id, comment_count
            ),
            c AS (INSERT INTO comments (post_id, user_id, body) SELECT id, \(caller.userID), \(body) FROM post RETURNING *),
            recorded AS (
                INSERT INTO changes (type, post_id, parent_id, user_id, data)
                SELECT 'comment.created', post.id, post.parent_id, \(caller.userID),
                       json_build_object('comment', comment_json(c::comments, a), 'comment_count', post.comment_count)
                FROM post, c JOIN profiles a ON a.user_id = c.user_id
            )
            SELECT \(unsafeSQL: Self.columns) FROM c JOIN profiles pr ON pr.user_id = c.user_id
            """
        let insert = { (connection: PostgresConnection) throws -> Response in
            guard let row = try connection.query(query).first else { throw HTTPError.notFound("no such post") }
            var comment: [UInt8] = []
            try CommentRows.append(row, to: &comment)
            var answer = JSONObject.success()
            answer.addRaw("comment", comment)
            return answer.response(status: .created)
        }
        do {
            guard let idempotency else { return try pool.withRetriedStatement(insert) }
            return try pool.withTransaction { connection in
                if let replay = try idempotency.replay(on: connection) { return replay }
                let response = try insert(connection)
                try idempotency.record(response, on: connection)
                return response
            }
        } catch let error as PostgresError where error.sqlState == .foreignKeyViolation {
            throw HTTPError.notFound("no such post")
        }
    }

    /// Deletes the caller's own comment: 403 for another's, 404 for none (or a malformed id).
    func delete(_ id: UUID, by caller: Caller) throws {
        let row = try pool.withRetriedStatement { connection in
            try connection.query("""
                WITH target AS (SELECT id, post_id, user_id FROM comments WHERE id = \(id)),
                lock AS (
                    SELECT \(unsafeSQL: ChangeLog.shareTree), pg_advisory_xact_lock(post_id) FROM target
                    WHERE user_id = \(caller.userID)
                ),
                del AS (
                    DELETE FROM comments c USING target
                    WHERE c.id = target.id AND target.user_id = \(caller.userID) AND (SELECT count(*) FROM lock) >= 0
                    RETURNING c.post_id
                ),
                upd AS (
                    UPDATE posts SET comment_count = comment_count - 1 WHERE id = (SELECT post_id FROM del)
                    RETURNING id, parent_id, comment_count
                ),
                recorded AS (
                    INSERT INTO changes (type, post_id, parent_id, user_id, data)
                    SELECT 'comment.deleted', upd.id, upd.parent_id, \(caller.userID),
                           json_build_object('comment_id', \(id), 'comment_count', upd.comment_count)
                    FROM upd
                )
                SELECT (SELECT user_id FROM target) AS author, (SELECT count(*) FROM del) AS deleted
                """).first!
        }
        guard let author = try row.decode("author", as: Int64?.self) else { throw HTTPError.notFound("no such comment") }
        guard author == caller.userID else { throw HTTPError(.forbidden, message: "only its author may delete a comment") }
        // Deleted by a request of its author's own an instant before this one.
        guard try row.decode("deleted", as: Int.self) == 1 else { throw HTTPError.notFound("no such comment") }
    }
}
