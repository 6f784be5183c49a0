import Postgres

/// The SQL every write that adds or removes follows shares (follow, unfollow, block,
/// account deletion, the demo seed): the rows and both users' counters in one statement,
/// which says what happened (`follow_changed`, with the counters after each follow). What
/// it counts must hold still: the statement runs after the profile locks of every user
/// concerned (`WriteLocks`), in the write's transaction.
enum FollowEdges {
    /// CTEs (to follow a `WITH`) that remove the follows matching `condition` (on the
    /// follows row, aliased `f`), at most `limit` of them: the removed rows are `gone`, the
    /// counters as they end up `counted`.
    static func removal(where condition: SQLQuery, limit: Int? = nil) -> SQLQuery {
        guard let limit else {
            return """
                gone AS (
                    DELETE FROM follows f WHERE \(condition) RETURNING f.follower_id, f.followee_id
                ), \(counting("gone", sign: "-"))
                """
        }
        return """
            gone AS (
                DELETE FROM follows WHERE ctid = ANY(ARRAY(SELECT ctid FROM follows f WHERE \(condition) LIMIT \(literal: limit)))
                RETURNING follower_id, followee_id
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
            RETURNING pr.*
        )
        """
    }

    /// The `follow_changed` events of the CTE `rows` (`follower_id`, `followee_id`), with the
    /// counters after them (from `counted`), made by `actor` (an SQL expression over the
    /// row `r`), in key order, or in the order of `order` (an SQL expression over `r`: a
    /// batch's arrival order).
    static func events(_ rows: String, following: Bool, actor: SQLQuery, byAccountDeletion: Bool = false,
                       order: SQLQuery = "r.follower_id, r.followee_id") -> SQLQuery {
        EventTable.followChanged.cte([
            "seq": "row_number() OVER (ORDER BY \(order))", "follower": "r.follower_id",
            "followee": "r.followee_id", "following": "\(following)",
            "followers_count": "coalesce(followee.followers_count, 0)", "following_count": "coalesce(follower.following_count, 0)",
            "actor": actor, "by_account_deletion": "\(byAccountDeletion)",
        ], """
            FROM \(unsafeSQL: rows) r LEFT JOIN counted followee ON followee.user_id = r.followee_id
            LEFT JOIN counted follower ON follower.user_id = r.follower_id
            """)
    }

    /// The write that removes the follows matching `condition` (on the follows row `f`),
    /// with their events made by `actor` (an account's deletion, a batch of its purge): its
    /// transaction holds both sides' locks. Answers how many it removed (`removed`).
    static func removing(where condition: SQLQuery, actor: Int64, byAccountDeletion: Bool) -> Write {
        Write(locking: .held, steps: [removal(where: condition)],
              events: [(.followChanged, events("gone", following: false, actor: "\(actor)", byAccountDeletion: byAccountDeletion))],
              answer: "SELECT count(*) AS removed FROM gone")
    }

}
