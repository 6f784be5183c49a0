import Postgres

/// A follow of a remote account (API.md "Remote people"): asked with a `Follow` and
/// pending until its `Accept` arrives (`InboxActivities`), which makes it a follow like
/// any; an unfollow while pending takes the request back with an `Undo`. The visibility
/// policy applies as to a local follow: none across a block.
struct RemoteFollows: Sendable {
    let pool: ConnectionPool
    let effects: EventEffects

    /// Whether the user is a remote account.
    func isRemote(_ user: Int64) throws -> Bool {
        try pool.withConnection { try $0.query("SELECT 1 FROM remote_actors WHERE user_id = \(user)").rowCount > 0 }
    }

    /// Asks to follow `target`: the request and its `Follow` in one statement (nothing when
    /// already asked or following). Answers whether it is pending (false: already followed).
    func request(_ target: Int64, by caller: Caller) throws -> (pending: Bool, followersCount: Int) {
        let now = effects.clock.now
        let row = try pool.withConnection { connection in
            try connection.query("""
                WITH target AS (
                    SELECT user_id, false AS tombstone,
                           \(Visibility.blockedNow(between: "\(caller.userID)", and: "\(target)")) AS blocked, followers_count
                    FROM profiles WHERE user_id = \(target)\(Visibility.actable(author: "profiles.user_id"))
                ), following AS (
                    SELECT 1 FROM follows WHERE follower_id = \(caller.userID) AND followee_id = \(target)
                ), asked AS (
                    INSERT INTO follow_requests (follower_id, followee_id, created_at)
                    SELECT \(caller.userID), user_id, \(now) FROM target WHERE NOT blocked AND NOT EXISTS (SELECT 1 FROM following)
                    ON CONFLICT DO NOTHING RETURNING followee_id
                ), sent AS (
                    INSERT INTO jobs (kind, payload, run_at, created_at)
                    SELECT \(JobKind.federationPublish.name),
                           \(JobPayload.federationPublish(kind: "\(OutgoingActivity.Kind.follow.rawValue)::text",
                                                          actor: "\(caller.userID)::bigint", followee: "followee_id")), \(now), \(now)
                    FROM asked
                )
                SELECT \(Write.refusal), EXISTS (SELECT 1 FROM following) AS following,
                       coalesce((SELECT followers_count FROM target), 0) AS followers_count
                """).firstRow()
        }
        effects.jobs.wake()
        try Visibility.check(.follow, Visibility.Target(refusal: row, gives: true))
        return (!(try row.decode("following", as: Bool.self)), Int(try row.decode("followers_count", as: Int32.self)))
    }

    /// Takes back a pending request (its `Undo`); false when there was none.
    func withdraw(_ target: Int64, by caller: Caller) throws -> Bool {
        let now = effects.clock.now
        let withdrawn = try pool.withConnection { connection in
            try connection.query("""
                WITH gone AS (
                    DELETE FROM follow_requests WHERE follower_id = \(caller.userID) AND followee_id = \(target) RETURNING followee_id
                )
                INSERT INTO jobs (kind, payload, run_at, created_at)
                SELECT \(JobKind.federationPublish.name),
                       \(JobPayload.federationPublish(kind: "\(OutgoingActivity.Kind.undoFollow.rawValue)::text",
                                                      actor: "\(caller.userID)::bigint", followee: "followee_id")), \(now), \(now)
                FROM gone
                """).affectedRows > 0
        }
        if withdrawn { effects.jobs.wake() }
        return withdrawn
    }
}
