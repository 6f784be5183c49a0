import Postgres

/// The SQL every write that removes follows shares (unfollow, block, account deletion):
/// the rows, both users' counters, the follower's feed rows of the followee, and one
/// `follow.changed` per follow removed, in one statement. What it counts must hold still:
/// the statement runs after `lockProfiles` of every user concerned, in its own transaction.
enum FollowEdges {
    /// The profile locks of these users, smallest key first (ChangeLog's order): the first
    /// statement of a transaction that adds or removes their follows. A follow's change
    /// carries both users' counters, and a new post's fan-out reads its author's followers
    /// under the same lock, shared (migration 0013).
    static func lockProfiles(_ userIDs: [Int64]) -> SQLQuery {
        let keys = Array(Set(userIDs.map { -$0 })).sorted()
        return "SELECT pg_advisory_xact_lock(key) FROM unnest(\(PostgresArray(keys))) AS key ORDER BY key"
    }

    /// The profile locks of a user and of everyone it follows or is followed by, smallest
    /// key first: an account's deletion removes all its follows.
    static func lockProfiles(ofAllFollowsOf userID: Int64) -> SQLQuery {
        """
        SELECT pg_advisory_xact_lock(key) FROM (
            SELECT -\(userID)::bigint AS key
            UNION SELECT -followee_id FROM follows WHERE follower_id = \(userID)
            UNION SELECT -follower_id FROM follows WHERE followee_id = \(userID)
        ) keys ORDER BY key
        """
    }

    /// CTEs (to follow a `WITH`) that remove the follows matching `condition` (on the
    /// follows row, aliased `f`), recorded as made by `actor`; the removed rows are `gone`,
    /// the counters as they end up `counted` (`user_id`, `followers_count`,
    /// `following_count`). `when` gates the whole removal (an SQL condition; `true` for none).
    static func removal(where condition: SQLQuery, by actor: SQLQuery, when gate: SQLQuery = "true") -> SQLQuery {
        """
        gone AS (
            DELETE FROM follows f WHERE \(condition) AND \(gate) RETURNING f.follower_id, f.followee_id
        ), \(counting("gone", sign: "-")),
        cleared AS (
            DELETE FROM feed_entries fe USING gone WHERE fe.user_id = gone.follower_id AND fe.author_id = gone.followee_id
        ), \(recording("gone", following: false, by: actor))
        """
    }

    /// `counts` and `counted`: the counters of both sides of every row of the CTE `rows`
    /// (`follower_id`, `followee_id`), moved by `sign` (`+` or `-`) once per row.
    static func counting(_ rows: String, sign: String) -> SQLQuery {
        """
        counts AS (
            SELECT user_id, sum(followers)::int AS followers, sum(following)::int AS following FROM (
                SELECT followee_id AS user_id, 1 AS followers, 0 AS following FROM \(unsafeSQL: rows)
                UNION ALL SELECT follower_id, 0, 1 FROM \(unsafeSQL: rows)
            ) sides GROUP BY user_id
        ), counted AS (
            UPDATE profiles pr SET followers_count = pr.followers_count \(unsafeSQL: sign) counts.followers,
                                   following_count = pr.following_count \(unsafeSQL: sign) counts.following
            FROM counts WHERE pr.user_id = counts.user_id
            RETURNING pr.user_id, pr.followers_count, pr.following_count
        )
        """
    }

    /// `recorded`: one `follow.changed` per row of the CTE `rows`, with the counters left.
    static func recording(_ rows: String, following: Bool, by actor: SQLQuery) -> SQLQuery {
        """
        recorded AS (\(ChangeLog.record(ChangeRecord(
            kind: .followChanged, userID: actor,
            data: [("follower_id", "r.follower_id"), ("followee_id", "r.followee_id"),
                   ("following", following ? "true" : "false"),
                   ("followers_count", "coalesce(followee.followers_count, 0)"),
                   ("following_count", "coalesce(follower.following_count, 0)")],
            source: """
                FROM \(unsafeSQL: rows) r LEFT JOIN counted followee ON followee.user_id = r.followee_id
                LEFT JOIN counted follower ON follower.user_id = r.follower_id
                ORDER BY r.follower_id, r.followee_id
                """))))
        """
    }
}
