import Postgres

/// Requests' plain comments (top-level, naming no one and no tag, without an
/// `Idempotency-Key`: most of them) as one statement (`WriteCoalescer`): each post's lock in
/// the one order, each post's counter moved for a post that may be commented on, the
/// comments inserted, one `comment_created` event each in arrival order, one answer row per
/// request. A batch holds one comment per post (`keys`). Replies, mentions, tags and
/// idempotent requests take `CommentService.insertion`, alone.
struct CommentBatch: WriteBatch {
    /// The pool as no one request's: each member's caller proof goes with the statement
    /// (`checking`), and a leader's own refuted one must not stop the others' statement.
    let pool: ConnectionPool
    let effects: EventEffects

    init(pool: ConnectionPool, effects: EventEffects) {
        self.pool = pool.serving(.none)
        self.effects = effects
    }

    struct Comment: Sendable {
        /// Trimmed and within the length limit already.
        let body: String
        let post: Int64
        let caller: Caller
        /// Its request's caller proof, checked ahead of the statement it shares.
        let precondition: Precondition?
    }

    static func keys(of comment: Comment) -> [Int64] { [comment.post] }

    /// Whether a text can go in a batch: nothing in it for `Mentions` or `Hashtags` to look up.
    static func isPlain(_ body: String) -> Bool {
        MentionParser().candidates(in: body).isEmpty && HashtagParser().tags(in: body).isEmpty
    }

    /// Each comment's JSON as the answer shows it, or its refusal.
    func run(_ comments: [Comment]) -> [Result<[UInt8], any Error>] {
        WriteBatches.run(comments, precondition: \.precondition) { comments in
            try pool.withRetriedStatement { connection in
                let rows: [PostgresRow]
                do {
                    rows = try effects.run(write(comments), on: connection, checking: comments.compactMap(\.precondition)).rows
                } catch let error as PostgresError where error.sqlState == .foreignKeyViolation && comments.count == 1 {
                    throw APIError.notFound(Visibility.Interaction.comment.missing)  // the post deleted meanwhile
                }
                guard rows.count == comments.count else {
                    throw PostgresError(.decoding, details: "a batch of \(comments.count) comments answered \(rows.count) rows")
                }
                return try zip(comments, rows).map { comment, row in
                    // No row: a post that may not be commented on (why: a read of its own).
                    guard try !row.isNull("id") else {
                        return .failure(try Visibility.refusal(toActOn: comment.post, .comment, by: comment.caller, on: connection))
                    }
                    var json: [UInt8] = []
                    try CommentShape.append(row, to: &json)
                    return .success(json)
                }
            }
        }
    }

    private func write(_ comments: [Comment]) -> Write {
        // One row per comment, in arrival order (migration 0030: why a function).
        let members: SQLQuery = """
            write_batch(\(PostgresArray(comments.map(\.post))), \(PostgresArray(comments.map(\.caller.userID))), \
            \(PostgresArray(comments.map(\.body))))
            """
        // The target is the posts that may be commented on (across a block: the blocks as
        // they are now, under the locks), read as they are once the locks are ours; their
        // counters move in an update without a join (see LikeBatch: a row re-read after a
        // concurrent change is rechecked, which a join can lose).
        return Write(
            locking: .first(.posts(comments.map(\.post))),
            target: Write.Target(statement: """
                SELECT m.idx, m.actor, m.body, p.id
                FROM \(members) AS m(post_id, actor, body, idx) JOIN posts p ON p.id = m.post_id
                WHERE NOT p.deleted AND NOT \(Visibility.blockedNow(between: "m.actor", and: "p.user_id"))
                  \(Visibility.actable(author: "p.user_id"))
                """, tail: "FOR KEY SHARE OF p"),
            steps: ["""
                upd AS (
                    UPDATE posts p SET comment_count = p.comment_count + 1
                    WHERE p.id = ANY(ARRAY(SELECT id FROM target))
                    RETURNING p.id, p.user_id, p.parent_id, p.comment_count
                )
                """, """
                c AS (
                    INSERT INTO comments (post_id, user_id, body, created_at)
                    SELECT id, actor, body, \(effects.clock.now) FROM target ORDER BY idx RETURNING *
                )
                """],
            events: [(.commentCreated, EventTable.commentCreated.cte([
                "seq": "target.idx", "comment": "c.id", "post": "upd.id", "post_parent": "upd.parent_id",
                "post_author": "upd.user_id", "reply_to": "NULL", "reply_to_author": "NULL",
                "actor": "c.user_id", "json": "\(unsafeSQL: CommentShape.json)", "comment_count": "upd.comment_count",
                "mentioned": "'{}'",
            ], "FROM c \(unsafeSQL: CommentShape.authorJoin) JOIN target ON target.id = c.post_id JOIN upd ON upd.id = c.post_id"))],
            answer: """
                SELECT \(unsafeSQL: CommentShape.columns)
                FROM \(members) AS m(post_id, actor, body, idx)
                LEFT JOIN (c \(unsafeSQL: CommentShape.authorJoin)) ON c.post_id = m.post_id
                ORDER BY m.idx
                """)
    }
}
