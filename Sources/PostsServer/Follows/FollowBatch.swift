import Postgres

/// Requests' follows, or requests' unfollows, as one transaction (`WriteCoalescer`): the
/// locks of every profile concerned in the one order, then one statement that writes the
/// follows and both sides' counters, one `follow_changed` event each in arrival order, and
/// one answer row per request. A batch holds one request per profile (`keys`: the follower
/// and the followee), so no counter is met twice. A batch of one is how an idle server, and
/// federation's inbox on its transaction, follows.
struct FollowBatch: WriteBatch {
    /// The pool as no one request's: each member's caller proof goes with the locks'
    /// statement (`checking`), and a leader's own refuted one must not stop the others'.
    let pool: ConnectionPool
    let effects: EventEffects
    /// Follows, or unfollows: one coalescer each.
    let following: Bool

    init(pool: ConnectionPool, effects: EventEffects, following: Bool) {
        self.pool = pool.serving(.none)
        self.effects = effects
        self.following = following
    }

    struct Follow: Sendable {
        let follower: Int64
        let followee: Int64
        /// Its request's caller proof, checked ahead of the batch's first statement.
        let precondition: Precondition?
    }

    static func keys(of follow: Follow) -> [Int64] { [follow.follower, follow.followee] }

    func run(_ follows: [Follow]) -> [Result<FollowService.State, any Error>] {
        WriteBatches.run(follows, precondition: \.precondition) { follows in
            try pool.withTransaction { connection in
                try run(follows, on: connection, committing: true, checking: follows.compactMap(\.precondition))
            }
        }
    }

    /// In the caller's transaction, as its first write (federation's inbox), or in the batch's own.
    func run(_ follows: [Follow], on connection: PostgresConnection, committing: Bool = false,
             checking preconditions: [Precondition] = []) throws -> [Result<FollowService.State, any Error>] {
        // Both users' follows and counters hold still, and the statement below reads with a
        // snapshot taken after the locks (see FollowEdges, FeedEffects).
        try connection.query(WriteLocks.profiles(follows.flatMap { [$0.follower, $0.followee] }).sql, checking: preconditions)
        let rows = try effects.run(write(follows), on: connection, committing: committing).rows
        guard rows.count == follows.count else {
            throw PostgresError(.decoding, details: "a batch of \(follows.count) follows answered \(rows.count) rows")
        }
        return rows.map { row in
            Result {
                try Visibility.check(.follow, Visibility.Target(refusal: row, gives: following))
                return FollowService.State(following: following, followersCount: Int(try row.decode("followers_count", as: Int32.self)))
            }
        }
    }

    private func write(_ follows: [Follow]) -> Write {
        // One row per follow, in arrival order (migration 0030).
        let members: SQLQuery = """
            write_batch(\(PostgresArray(follows.map(\.followee))), \(PostgresArray(follows.map(\.follower))), \
            \(PostgresArray(follows.map { _ in "" })))
            """
        // The user followed, `blocked` checked against the table under the locks (the
        // callers' cached sets may be a moment old; only a follow gives, so only it asks).
        let blocked: SQLQuery = following ? Visibility.blockedNow(between: "m.actor", and: "pr.user_id") : "false"
        let target = Write.Target(statement: """
            SELECT m.idx, m.actor AS follower, pr.user_id, false AS tombstone, \(blocked) AS blocked
            FROM \(members) AS m(followee, actor, unused, idx) JOIN profiles pr ON pr.user_id = m.followee
            WHERE true\(Visibility.actable(author: "pr.user_id"))
            """)
        let order: SQLQuery = "(SELECT t.idx FROM target t WHERE t.follower = r.follower_id AND t.user_id = r.followee_id)"
        let steps: [SQLQuery] = following ? ["""
            made AS (
                INSERT INTO follows (follower_id, followee_id, created_at)
                SELECT follower, user_id, \(effects.clock.now) FROM target WHERE NOT blocked ORDER BY idx
                ON CONFLICT DO NOTHING RETURNING follower_id, followee_id
            )
            """, FollowEdges.counting("made", sign: "+")]
            : [FollowEdges.removal(where: "(f.follower_id, f.followee_id) IN (SELECT follower, user_id FROM target)")]
        return Write(
            locking: .held, target: target, steps: steps,
            events: [(.followChanged, FollowEdges.events(following ? "made" : "gone", following: following, actor: "r.follower_id",
                                                         order: order))],
            profilesCounted: "counted",
            // The followee's count: as the write left it, or as it was when nothing changed.
            answer: """
                SELECT m.idx, (t.idx IS NOT NULL)::int::int8 AS found, false AS tombstone, coalesce(t.blocked, false) AS blocked,
                       coalesce((SELECT followers_count FROM counted c WHERE c.user_id = m.followee),
                                (SELECT followers_count FROM profiles p WHERE p.user_id = m.followee), 0) AS followers_count
                FROM \(members) AS m(followee, actor, unused, idx) LEFT JOIN target t ON t.idx = m.idx
                ORDER BY m.idx
                """)
    }
}
