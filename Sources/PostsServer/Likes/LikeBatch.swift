import Postgres

/// Requests' likes, unlikes and toggles as one statement (`WriteCoalescer`): each post's
/// lock in the one order, its row read under them, the like rows and the counters changed,
/// one `like_changed` event per change in arrival order, one answer row per request. A
/// batch holds one request per post (`keys`), so no row is met twice. A batch of one is how
/// an idle server (and federation's inbox, on its transaction) likes.
struct LikeBatch: WriteBatch {
    /// The pool as no one request's: each member's caller proof goes with the statement
    /// (`checking`), and a leader's own refuted one must not stop the others' statement.
    let pool: ConnectionPool
    let effects: EventEffects

    init(pool: ConnectionPool, effects: EventEffects) {
        self.pool = pool.serving(.none)
        self.effects = effects
    }

    struct Like: Sendable {
        let action: LikeService.Action
        let post: Int64
        let caller: Caller
        /// Its request's caller proof, checked ahead of the statement it shares.
        let precondition: Precondition?
    }

    static func keys(of like: Like) -> [Int64] { [like.post] }

    func run(_ likes: [Like]) -> [Result<LikeService.State, any Error>] {
        WriteBatches.run(likes, precondition: \.precondition) { likes in
            try pool.withRetriedStatement { try run(likes, on: $0, checkingPreconditions: true) }
        }
    }

    /// `checkingPreconditions`: each like's request's proof goes ahead of the statement (a
    /// batch's); without, only what `connection` carries (federation's inbox, in its transaction).
    func run(_ likes: [Like], on connection: PostgresConnection,
             checkingPreconditions: Bool = false) throws -> [Result<LikeService.State, any Error>] {
        let rows: [PostgresRow]
        do {
            rows = try effects.run(write(likes), on: connection,
                                   checking: checkingPreconditions ? likes.compactMap(\.precondition) : []).rows
        } catch let error as PostgresError where error.sqlState == .foreignKeyViolation && likes.count == 1 {
            throw APIError.notFound(Visibility.Interaction.like.missing)  // deleted while we liked it
        }
        return try states(likes, rows)
    }

    private func write(_ likes: [Like]) -> Write {
        // One row per like, in arrival order (migration 0030: why a function).
        let members: SQLQuery = """
            write_batch(\(PostgresArray(likes.map(\.post))), \(PostgresArray(likes.map(\.caller.userID))), \
            \(PostgresArray(likes.map(\.action.rawValue))))
            """
        // What each action deletes and inserts; a counter moves by their difference, and is
        // not written at all when nothing changed. Across a block a like may be taken back,
        // never given: the insert is gated on the author not being on the other side (the
        // blocks as they are now, under the locks: what the caller's proof vouched for, or newer).
        return Write(
            locking: .first(.posts(likes.map(\.post))),
            target: Write.Target(statement: """
                SELECT m.idx, m.actor, m.action, p.id, p.user_id, p.parent_id, p.like_count, p.deleted AS tombstone,
                       \(Visibility.blockedNow(between: "m.actor", and: "p.user_id")) AS blocked
                FROM \(members) AS m(post_id, actor, action, idx)
                JOIN posts p ON p.id = m.post_id
                WHERE true\(Visibility.actable(author: "p.user_id"))
                """,
                // The rows as they are once the locks are ours, not as the statement's snapshot
                // had them: a post tombstoned while this waited is seen as one (and its new owner).
                tail: "FOR KEY SHARE OF p"),
            steps: [
                """
                del AS (
                    DELETE FROM likes l USING target t
                    WHERE l.post_id = t.id AND l.user_id = t.actor AND t.action <> 'like' RETURNING l.post_id
                )
                """,
                """
                ins AS (
                    INSERT INTO likes (post_id, user_id, created_at)
                    SELECT t.id, t.actor, \(effects.clock.now) FROM target t
                    WHERE t.action <> 'unlike' AND NOT t.tombstone AND NOT t.blocked
                      AND NOT EXISTS (SELECT 1 FROM del WHERE del.post_id = t.id)
                    ORDER BY t.idx
                    ON CONFLICT DO NOTHING RETURNING post_id
                )
                """,
                // The parent as of now (the update's row), not as of the statement's start
                // (before the lock wait: a reparent may have committed since).
                // No join in the update: a post's row changed by another write while this one
                // waited for its lock is re-read (EvalPlanQual) and its condition checked again,
                // which an array and sub-selects survive; a join against the union of the CTEs
                // lost the row now and then (a like written, its counter and change not).
                """
                upd AS (
                    UPDATE posts p
                    SET like_count = p.like_count + (SELECT count(*) FROM ins WHERE ins.post_id = p.id)
                                                  - (SELECT count(*) FROM del WHERE del.post_id = p.id)
                    WHERE p.id = ANY(ARRAY(SELECT post_id FROM ins UNION ALL SELECT post_id FROM del))
                    RETURNING p.id, p.like_count, p.parent_id,
                              (SELECT count(*) FROM ins WHERE ins.post_id = p.id)
                              - (SELECT count(*) FROM del WHERE del.post_id = p.id) AS delta
                )
                """,
            ],
            events: [(.likeChanged, EventTable.likeChanged.cte([
                "seq": "t.idx", "post": "upd.id", "parent": "upd.parent_id", "post_author": "t.user_id", "actor": "t.actor",
                "liked": "upd.delta > 0", "like_count": "upd.like_count",
            ], "FROM upd JOIN target t ON t.id = upd.id"))],
            answer: """
                SELECT m.idx, (t.idx IS NOT NULL)::int::int8 AS found, coalesce(t.tombstone, false) AS tombstone,
                       coalesce(t.blocked, false) AS blocked, coalesce(u.like_count, t.like_count) AS like_count,
                       coalesce(u.delta, 0)::int8 AS delta
                FROM \(members) AS m(post_id, actor, action, idx)
                LEFT JOIN target t ON t.idx = m.idx LEFT JOIN upd u ON u.id = m.post_id
                ORDER BY m.idx
                """)
    }

    /// Each like's answer row as its state, or its refusal.
    private func states(_ likes: [Like], _ rows: [PostgresRow]) throws -> [Result<LikeService.State, any Error>] {
        guard rows.count == likes.count else {
            throw PostgresError(.decoding, details: "a batch of \(likes.count) likes answered \(rows.count) rows")
        }
        return zip(likes, rows).map { like, row in
            Result {
                let delta = try row.decode("delta", as: Int.self)
                // A tombstone or a post across a block may lose a like, never gain one: a toggle
                // that would like it is refused too. (Nothing was written: the insert is gated on both.)
                let gives = like.action == .like || (like.action == .toggle && delta >= 0)
                try Visibility.check(.like, Visibility.Target(refusal: row, gives: gives))
                let liked = switch like.action {
                case .like: true
                case .unlike: false
                // Neither inserted nor deleted: another request liked it at the same moment.
                case .toggle: delta >= 0
                }
                return LikeService.State(liked: liked, likeCount: try row.decode("like_count"), changed: delta != 0)
            }
        }
    }
}
