import Postgres

/// The SQL every write that adds or removes follows shares (follow, unfollow, block,
/// account deletion, the demo seed): the rows and both users' counters in one statement,
/// whose answer is each follow changed with the counters after it (`followChanges`), the
/// events the write returns. What it counts must hold still: the statement runs after the
/// profile locks of every user concerned (`WriteLocks`), in the write's transaction.
enum FollowEdges {
    /// CTEs (to follow a `WITH`) that remove the follows matching `condition` (on the
    /// follows row, aliased `f`): the removed rows are `gone`, the counters as they end up
    /// `counted`. `when` gates the whole removal (an SQL condition; `true` for none).
    static func removal(where condition: SQLQuery, when gate: SQLQuery = "true") -> SQLQuery {
        """
        gone AS (
            DELETE FROM follows f WHERE \(condition) AND \(gate) RETURNING f.follower_id, f.followee_id
        ), \(counting("gone", sign: "-"))
        """
    }

    /// `counts` and `counted`: the counters of both sides of every row of the CTE `rows`
    /// (`follower_id`, `followee_id`), moved by `sign` (`+` or `-`) once per row; the
    /// profiles' rows are updated in key order (as every lock is taken).
    static func counting(_ rows: String, sign: String) -> SQLQuery {
        """
        counts AS (
            SELECT user_id, sum(followers)::int AS followers, sum(following)::int AS following FROM (
                SELECT followee_id AS user_id, 1 AS followers, 0 AS following FROM \(unsafeSQL: rows)
                UNION ALL SELECT follower_id, 0, 1 FROM \(unsafeSQL: rows)
            ) sides GROUP BY user_id ORDER BY user_id
        ), counted AS (
            UPDATE profiles pr SET followers_count = pr.followers_count \(unsafeSQL: sign) counts.followers,
                                   following_count = pr.following_count \(unsafeSQL: sign) counts.following
            FROM counts WHERE pr.user_id = counts.user_id
            RETURNING pr.user_id, pr.followers_count, pr.following_count
        )
        """
    }

    /// A select of every row of the CTE `rows` with the counters after it: the followee's
    /// `followers_count`, the follower's `following_count`.
    static func changed(_ rows: String) -> String {
        """
        SELECT r.follower_id, r.followee_id, coalesce(followee.followers_count, 0) AS followers_count,
               coalesce(follower.following_count, 0) AS following_count
        FROM \(rows) r LEFT JOIN counted followee ON followee.user_id = r.followee_id
        LEFT JOIN counted follower ON follower.user_id = r.follower_id
        """
    }

    /// The events of the rows `changed` selected (rows whose `follower_id` is NULL, from an
    /// outer join that found none, are passed over).
    static func followChanges(_ rows: [PostgresRow], following: Bool, actor: (Int64) -> Int64,
                              byAccountDeletion: Bool = false) throws -> [DomainEvent] {
        try rows.compactMap { row in
            guard let follower: Int64 = try row.decode("follower_id") else { return nil }
            return .followChanged(FollowChanged(
                follower: follower, followee: try row.decode("followee_id"), following: following,
                followersCount: Int(try row.decode("followers_count", as: Int32.self)),
                followingCount: Int(try row.decode("following_count", as: Int32.self)), actor: actor(follower),
                byAccountDeletion: byAccountDeletion))
        }.sorted { left, right in
            guard case .followChanged(let l) = left, case .followChanged(let r) = right else { return false }
            return (l.follower, l.followee) < (r.follower, r.followee)
        }
    }
}
