import Postgres

/// Likes: like, unlike and toggle, and the page of a post's likers. Every write goes
/// through `apply`, the one place a like changes: one statement (data-modifying CTEs change
/// the like row and the post's counter together, after the post's lock) that says what
/// happened (`like_changed`) and records what follows from it (`EventEffects`).
struct LikeService: Sendable {
    var pool: ConnectionPool
    let effects: EventEffects

    enum Action: Sendable {
        case like
        case unlike
        case toggle
    }

    struct State: Sendable {
        let liked: Bool
        let likeCount: Int
        /// False for a repeat that changed nothing (liking a liked post).
        let changed: Bool
    }

    /// The post's like state after the action: 404 when there is no such post (or it cannot
    /// be read), 410 to like a tombstone, 403 to like across a block (`Visibility.check`).
    /// `connection`: in the caller's transaction (federation's inbox), else a statement of its own.
    func apply(_ action: Action, post postID: Int64, by caller: Caller, on connection: PostgresConnection? = nil) throws -> State {
        let user = caller.userID
        // What the action deletes and inserts; the counter moves by their difference, and
        // is not written at all when nothing changed. Across a block a like may be taken
        // back, never given: the insert is gated on the author not being on the other side.
        let delete: SQLQuery = action == .like ? "SELECT NULL::bigint AS post_id WHERE false" : """
            DELETE FROM likes WHERE post_id = (SELECT id FROM target) AND user_id = \(user) RETURNING post_id
            """
        let insert: SQLQuery = action == .unlike ? "SELECT NULL::bigint AS post_id WHERE false" : """
            INSERT INTO likes (post_id, user_id, created_at) SELECT id, \(user), \(effects.clock.now) FROM target WHERE NOT EXISTS (SELECT 1 FROM del)
            AND NOT target.tombstone AND NOT target.blocked
            ON CONFLICT DO NOTHING RETURNING post_id
            """
        // The parent as of now (the update's row), not as of the statement's start (before
        // the lock wait: a reparent may have committed since).
        let write = Write(
            locking: .first(.posts([postID])),
            target: Write.Target(statement: """
                SELECT id, user_id, parent_id, like_count, deleted AS tombstone,
                       \(Visibility.blocked(author: "user_id", from: caller)) AS blocked
                FROM posts WHERE id = \(postID)\(Visibility.actable(author: "posts.user_id"))
                """,
                // The row as it is once the lock is ours, not as the statement's snapshot had it:
                // a post tombstoned while this waited is seen as one (and its new owner).
                tail: "FOR KEY SHARE"),
            steps: [
                "del AS (\(delete))",
                "ins AS (\(insert))",
                """
                upd AS (
                    UPDATE posts SET like_count = like_count + (SELECT count(*) FROM ins) - (SELECT count(*) FROM del)
                    WHERE id = (SELECT id FROM target) AND (EXISTS (SELECT 1 FROM ins) OR EXISTS (SELECT 1 FROM del))
                    RETURNING id, like_count, parent_id
                )
                """,
            ],
            events: [(.likeChanged, EventTable.likeChanged.cte([
                "seq": "1", "post": "upd.id", "parent": "upd.parent_id", "post_author": "target.user_id", "actor": "\(user)",
                "liked": "EXISTS (SELECT 1 FROM ins)", "like_count": "upd.like_count",
            ], "FROM upd, target"))],
            answer: """
                SELECT \(Write.refusal),
                       coalesce((SELECT like_count FROM upd), (SELECT like_count FROM target)) AS like_count,
                       (SELECT count(*) FROM ins) AS inserted, (SELECT count(*) FROM del) AS deleted
                """)
        let row: PostgresRow
        do {
            if let connection {
                row = try effects.run(write, on: connection).firstRow()
            } else {
                row = try pool.withRetriedStatement { try effects.run(write, on: $0).firstRow() }
            }
        } catch let error as PostgresError where error.sqlState == .foreignKeyViolation {
            throw APIError.notFound(Visibility.Interaction.like.missing)  // deleted while we liked it
        }
        let inserted = try row.decode("inserted", as: Int.self) == 1
        let deleted = try row.decode("deleted", as: Int.self) == 1
        // A tombstone or a post across a block may lose a like, never gain one: a toggle
        // that would like it is refused too. (Nothing was written: the insert is gated on both.)
        try Visibility.check(.like, Visibility.Target(refusal: row, gives: action == .like || (action == .toggle && !deleted)))
        let liked = switch action {
        case .like: true
        case .unlike: false
        // Neither inserted nor deleted: another request liked it at the same moment.
        case .toggle: !deleted
        }
        return State(liked: liked, likeCount: try row.decode("like_count"), changed: inserted || deleted)
    }

    struct Likers: Sendable {
        let likeCount: Int
        let profilesJSON: [UInt8]
        let nextCursor: KeysetCursor?
    }

    /// The post's likers' profiles, newest like first; nil when there is no such post (or
    /// the caller may not read it). Likers the caller may not see (`Visibility.Surface.likers`)
    /// are left out (the count stays global).
    func likers(of postID: Int64, _ request: PageRequest<KeysetCursor>, caller: Caller?) throws -> Likers? {
        var page: SQLQuery = "SELECT l.created_at, l.user_id FROM likes l WHERE l.post_id = post.id"
        page.append(Visibility.visible(on: .likers, author: "l.user_id", to: caller))
        if let cursor = request.cursor { page.append(cursor.before(created: "l.created_at", id: "l.user_id")) }
        page.append(" ORDER BY l.created_at DESC, l.user_id DESC LIMIT \(literal: request.limit + 1)")
        let query: SQLQuery = """
            SELECT post.like_count, l.created_at AS liked_at, \(unsafeSQL: ProfileShape.columns)
            FROM (
                SELECT id, like_count FROM posts
                WHERE id = \(postID)\(Visibility.visible(on: .postRead, author: "posts.user_id", to: caller))
            ) post
            LEFT JOIN LATERAL (\(page)) l ON true
            LEFT JOIN profiles pr ON pr.user_id = l.user_id
            ORDER BY l.created_at DESC, l.user_id DESC
            """
        return try pool.withReadConnection { connection -> Likers? in
            let rows = try connection.query(query).rows
            guard let first = rows.first else { return nil }
            let likers = try rows.filter { try !$0.isNull("user_id") }
            let profile = try first.position(of: "user_id")
            let (json, last) = try RowJSON.page(likers, limit: request.limit) { row, out in
                try ProfileShape.append(row, from: profile, to: &out)
            }
            let next = try last.map { KeysetCursor(createdAt: try $0.decode("liked_at"), id: try $0.decode("user_id")) }
            return Likers(likeCount: try first.decode("like_count"), profilesJSON: json, nextCursor: next)
        }
    }
}
