import Foundation
import Postgres

/// Adding and deleting comments: each one statement (data-modifying CTEs) that changes the
/// rows and keeps the counters (`posts.comment_count`, which counts replies too, and the
/// top-level comment's `reply_count`), after the post's lock (see `ChangeLog`), and says
/// what happened (`comment_created`, `comment_deleted`) with what follows from it
/// (`EventEffects`).
extension CommentService {
    /// Adds a comment (trimmed, 1...2,200 characters: 422 otherwise), or a reply when
    /// `replyTo` names a comment of the same post (422 for another post's, 404 for none): the
    /// comment, or the first answer again for a retried `Idempotency-Key`. 404 when there is
    /// no post, 403 across a block.
    func add(_ text: String, to postID: Int64, replyTo: UUID? = nil, by caller: Caller,
             idempotency: IdempotentRequest?) throws -> Created {
        let body = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...Self.maxLength).contains(body.count) else {
            throw APIError.invalid("body must be 1 to \(Self.maxLength) characters")
        }
        if replyTo == nil && idempotency == nil && CommentBatch.isPlain(body) {
            let comment = CommentBatch.Comment(body: body, post: postID, caller: caller, precondition: pool.session.precondition)
            return .created(try coalescer.submit(comment, running: CommentBatch(pool: pool, effects: effects)))
        }
        let insert = { (connection: PostgresConnection) throws -> [UInt8] in
            let thread = try replyTo.map { try Self.thread(of: $0, onPost: postID, for: caller, on: connection) }
            return try insertion(body, postID: postID, thread: thread, by: caller, on: connection)
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
            // The post, or the comment replied to, was deleted while this one was written.
            throw APIError.notFound(replyTo == nil ? Visibility.Interaction.comment.missing : Visibility.Interaction.reply.missing)
        }
    }

    /// The thread a reply joins: its top-level comment (replies are one level deep: a reply
    /// to a reply joins the same thread) and that comment's author.
    private struct Thread {
        let top: UUID
        let author: Int64
    }

    /// 404 for no such comment (or one whose author or whose thread's author is suspended),
    /// 422 for another post's, 403 across a block. A read, before the write's locks.
    private static func thread(of id: UUID, onPost postID: Int64, for caller: Caller,
                               on connection: PostgresConnection) throws -> Thread {
        let row = try connection.query("""
            SELECT c.post_id, coalesce(c.reply_to, c.id) AS top, t.user_id AS top_user_id,
                   \(Visibility.blocked(author: "c.user_id", from: caller)) OR \(Visibility.blocked(author: "t.user_id", from: caller)) AS blocked
            FROM comments c JOIN comments t ON t.id = coalesce(c.reply_to, c.id)
            WHERE c.id = \(id)\(Visibility.actable(author: "c.user_id"))\(Visibility.actable(author: "t.user_id"))
            """).first
        try Visibility.check(.reply, Visibility.Target(found: row != nil))
        guard let row else { throw APIError.notFound(Visibility.Interaction.reply.missing) }
        guard try row.decode("post_id", as: Int64.self) == postID else {
            throw APIError.invalid("reply_to must name a comment of the same post")
        }
        try Visibility.check(.reply, Visibility.Target(found: true, blocked: try row.decode("blocked")))
        return Thread(top: try row.decode("top"), author: try row.decode("top_user_id"))
    }

    /// The insert, the post's count and the thread's `reply_count` for a reply, in one
    /// statement. Should the thread's top-level comment be deleted before this statement
    /// holds the post's lock, its update finds no row and the insert's foreign key fails
    /// the whole statement (404): no count moves without its row.
    private func insertion(_ body: String, postID: Int64, thread: Thread?, by caller: Caller,
                           on connection: PostgresConnection) throws -> [UInt8] {
        // No lookup at all for a text without a candidate `@name` (most of them).
        let mentions = try Mentions.resolve([("body", body)], on: connection)
        let tags = try Hashtags.resolve([("body", body)], on: connection)
        var steps: [SQLQuery] = []
        let top = thread?.top
        if let top {
            steps.append("""
                thread AS (
                    UPDATE comments SET reply_count = reply_count + 1 WHERE id = \(top) AND EXISTS (SELECT 1 FROM target)
                    RETURNING id
                )
                """)
        }
        steps.append("""
            c AS (
                INSERT INTO comments (post_id, user_id, body, reply_to, mentions, tags, created_at)
                SELECT id, \(caller.userID), \(body), \(top)::uuid, \(Mentions.column(mentions))::json,
                       \(Hashtags.column(tags))::json, \(effects.clock.now) FROM target RETURNING *
            )
            """)
        if !tags.isEmpty {
            steps.append("named_tags AS (SELECT * FROM tag_ids(\(PostgresArray(Hashtags.names(tags)))::text[], \(effects.clock.now)))")
            steps.append("""
                comment_tagged AS (
                    INSERT INTO comment_tags (tag_id, comment_id, author_id, created_at)
                    SELECT t.tag_id, c.id, c.user_id, c.created_at FROM c, named_tags t
                )
                """)
        }
        // The target is the post's counter, moved only for a post that may be commented on.
        let write = Write(
            locking: .first(.posts([postID])),
            target: Write.Target(statement: """
                UPDATE posts SET comment_count = comment_count + 1
                WHERE id = \(postID) AND NOT deleted AND NOT \(Visibility.blocked(author: "user_id", from: caller))
                  \(Visibility.actable(author: "posts.user_id"))
                """, tail: "RETURNING id, user_id, parent_id, comment_count"),
            steps: steps,
            events: [(.commentCreated, EventTable.commentCreated.cte([
                "seq": "1", "comment": "c.id", "post": "target.id", "post_parent": "target.parent_id",
                "post_author": "target.user_id", "reply_to": "c.reply_to", "reply_to_author": "\(thread?.author)::bigint",
                "actor": "c.user_id", "json": "\(unsafeSQL: CommentShape.json)", "comment_count": "target.comment_count",
                "mentioned": "\(PostgresArray(mentions.map(\.userID)))",
            ], "FROM c \(unsafeSQL: CommentShape.authorJoin), target"))],
            answer: "SELECT \(unsafeSQL: CommentShape.columns) FROM c \(unsafeSQL: CommentShape.authorJoin)")
        guard let row = try effects.run(write, on: connection).first else {
            throw try Visibility.refusal(toActOn: postID, .comment, by: caller, on: connection)
        }
        // Without `liked_by_me`: the answer is the comment the change carries.
        var comment: [UInt8] = []
        try CommentShape.append(row, to: &comment)
        return comment
    }

    /// A comment written in the caller's transaction (federation's inbox: a remote reply),
    /// under the same rules as `add`; the comment's JSON.
    func add(_ text: String, to postID: Int64, replyTo: UUID?, by caller: Caller, on connection: PostgresConnection) throws -> [UInt8] {
        let body = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...Self.maxLength).contains(body.count) else {
            throw APIError.invalid("body must be 1 to \(Self.maxLength) characters")
        }
        let thread = try replyTo.map { try Self.thread(of: $0, onPost: postID, for: caller, on: connection) }
        return try insertion(body, postID: postID, thread: thread, by: caller, on: connection)
    }

    /// The author's delete of its comment in the caller's transaction: false when there was none of theirs.
    func delete(_ id: UUID, by caller: Caller, on connection: PostgresConnection) throws -> Bool {
        let row = try effects.run(deletion(of: id, by: caller, authorOnly: true), on: connection).firstRow()
        return try row.decode("deleted", as: Int.self) == 1
    }

    /// Deletes the caller's own comment (a top-level one with its replies): 403 for
    /// another's, 404 for none (or a malformed id).
    func delete(_ id: UUID, by caller: Caller) throws {
        let row = try pool.withRetriedStatement { try effects.run(deletion(of: id, by: caller, authorOnly: true), on: $0).firstRow() }
        guard let author = try row.decode("author", as: Int64?.self) else { throw APIError.notFound("no such comment") }
        guard author == caller.userID else { throw APIError.forbidden("only its author may delete a comment") }
        // Deleted by a request of its author's own an instant before this one.
        guard try row.decode("deleted", as: Int.self) == 1 else { throw APIError.notFound("no such comment") }
    }

    /// A moderator's removal of anyone's comment, in the moderator's transaction: 404 for none.
    func remove(_ id: UUID, by moderator: Caller, on connection: PostgresConnection) throws {
        let row = try effects.run(deletion(of: id, by: moderator, authorOnly: false), on: connection).firstRow()
        guard try row.decode("deleted", as: Int.self) == 1 else { throw APIError.notFound("no such comment") }
    }

    /// The delete, its counts and its event in one statement; `authorOnly`: only the
    /// caller's own. Answers the comment's author (NULL: none) and how many were deleted.
    ///
    /// A top-level comment's replies go by the foreign key's cascade, which sees every reply
    /// committed before the delete (also one committed after this statement's snapshot,
    /// while it waited for the post's lock). The post's count drops by 1 + the comment's
    /// `reply_count` as the delete found it: the row's latest version (a write re-reads a
    /// row changed since its snapshot), which every reply's insert moved under the same
    /// lock. So the count stays exact without listing the replies.
    private func deletion(of id: UUID, by caller: Caller, authorOnly: Bool) -> Write {
        let mine: SQLQuery = "(NOT \(authorOnly) OR user_id = \(caller.userID))"
        return Write(
            locking: .postOf(located: "SELECT post_id FROM comments WHERE id = \(id) AND \(mine)"),
            target: Write.Target(statement: "DELETE FROM comments WHERE id = \(id) AND \(mine)",
                                 tail: "RETURNING id, post_id, reply_to, reply_count"),
            steps: [
                "thread AS (UPDATE comments SET reply_count = reply_count - 1 WHERE id = (SELECT reply_to FROM target))",
                """
                upd AS (
                    UPDATE posts SET comment_count = comment_count - 1 - (SELECT reply_count FROM target)
                    WHERE id = (SELECT post_id FROM target)
                    RETURNING id, parent_id, comment_count
                )
                """,
            ],
            events: [(.commentDeleted, EventTable.commentDeleted.cte([
                "seq": "1", "comment": "target.id", "post": "upd.id", "post_parent": "upd.parent_id",
                "actor": "\(caller.userID)", "comment_count": "upd.comment_count", "reply_to": "target.reply_to",
            ], "FROM target, upd"))],
            answer: """
                SELECT (SELECT user_id FROM comments WHERE id = \(id)) AS author, (SELECT count(*) FROM target) AS deleted
                """)
    }
}
