import Locking
import Postgres

/// What the pruner has removed on this instance since the start, by rule (for /metrics).
/// (How far the per-user caps' sweep has come is kept in the `upkeep.prune` job, for
/// whichever instance runs the next round.)
final class UpkeepCounters: Sendable {
    private let removedByRule = ParkingLock([String: Int]())

    func add(_ count: Int, to rule: String) {
        removedByRule.withLock { $0[rule, default: 0] += count }
    }

    /// Rows removed by each rule that has run.
    var removed: [String: Int] { removedByRule.withLock { $0 } }
}

extension UpkeepPruner {
    /// A per-user bound: each user keeps its newest `keep` rows of `table` (newest by
    /// `created`, then `key`, as the table's index on (`owner`, `created`, `key`) reads them).
    struct Cap: Sendable {
        let name: String
        let table: String
        let owner: String
        let created: String
        let key: String
        let keep: Int
    }

    /// API.md "Feeds at any scale": a reader's feed rows past its depth, a recipient's
    /// notifications past its newest 1,000.
    static let caps = [
        Cap(name: "feed_depth", table: "feed_entries", owner: "user_id", created: "created_at", key: "post_id",
            keep: FeedService.depth),
        Cap(name: "notifications_per_recipient", table: "notifications", owner: "recipient_id", created: "created_at",
            key: "id", keep: 1_000),
    ]

    /// Users one statement of the sweep looks at: about 0.1 ms of database time each (an
    /// index walk of at most `keep` entries per cap).
    static let usersPerSweep = 500
    /// How long one round sweeps before it leaves the rest to the next round (every 30 s):
    /// ~10,000 users a round, 1M users in under an hour, so a user is past its caps by at
    /// most what an hour brings it.
    static let sweepBudget: Duration = .seconds(1)

    /// Sweeps the users in id order from past `start` (where the last round stopped), for
    /// `sweepBudget` or to the last user. Why a sweep rather than a trim as rows are written:
    /// a trim at each post's fan-out would walk every follower's feed, a cost per follower;
    /// a count kept per user would be another write per row. Returns the rows removed per
    /// table, and the highest user id swept (0 once the last user was: the next pass starts
    /// again from the first).
    func sweepCaps(past start: Int64) throws -> (removed: [String: Int], sweptPast: Int64) {
        var removed: [String: Int] = [:]
        var sweptPast = start
        let started = ContinuousClock.now
        repeat {
            let row = try pool.withRetriedStatement { try $0.query(sweep(after: sweptPast)).firstRow() }
            for cap in Self.caps {
                let count = Int(try row.decode(cap.name, as: Int64.self))
                removed[cap.table, default: 0] += count
                counters.add(count, to: cap.name)
            }
            guard let last: Int64 = try row.decode("last") else { return (removed, 0) }
            sweptPast = last
        } while ContinuousClock.now - started < Self.sweepBudget
        return (removed, sweptPast)
    }

    /// One statement: the next users, and for each cap the rows past each one's newest `keep`.
    private func sweep(after: Int64) -> SQLQuery {
        var query: SQLQuery = "WITH readers AS (SELECT id FROM users WHERE id > \(after) ORDER BY id LIMIT \(literal: Self.usersPerSweep))"
        var counts: SQLQuery = "SELECT (SELECT max(id) FROM readers) AS last"
        for cap in Self.caps {
            query.append("""
                , \(unsafeSQL: cap.name)_cut AS (
                    SELECT r.id AS owner, c.created, c.key FROM readers r, LATERAL (
                        SELECT \(unsafeSQL: cap.created) AS created, \(unsafeSQL: cap.key) AS key FROM \(unsafeSQL: cap.table)
                        WHERE \(unsafeSQL: cap.owner) = r.id
                        ORDER BY \(unsafeSQL: cap.created) DESC, \(unsafeSQL: cap.key) DESC OFFSET \(literal: cap.keep) LIMIT 1
                    ) c
                ), \(unsafeSQL: cap.name) AS (
                    DELETE FROM \(unsafeSQL: cap.table) t USING \(unsafeSQL: cap.name)_cut c
                    WHERE t.\(unsafeSQL: cap.owner) = c.owner AND (t.\(unsafeSQL: cap.created), t.\(unsafeSQL: cap.key)) <= (c.created, c.key)
                    RETURNING 1
                )
                """)
            counts.append(", (SELECT count(*) FROM \(unsafeSQL: cap.name)) AS \(unsafeSQL: cap.name)")
        }
        query.append(" ")
        query.append(counts)
        return query
    }
}
