import Postgres

/// Follows (API.md "Following"): idempotent writes that keep both users' counters exact
/// and say what happened (`FollowChanged`: the write path records it and fills or empties
/// the follower's home feed, see `FeedEffects`); and the followers and following pages.
struct FollowService: Sendable {
    var pool: ConnectionPool
    let effects: EventEffects
    /// With federation: follows of remote accounts wait for their Accept.
    var remote: RemoteFollows?

    /// How many of the followee's newest posts a new follow copies into the follower's feed.
    /// Older ones never appear there (a departure, in CHANGELOG): the copy is part of the
    /// follow's request, so its cost must be bounded.
    static let backfillLimit = 1_000

    struct State: Sendable {
        let following: Bool
        let followersCount: Int
        /// A follow of a remote account asked and not yet accepted.
        var pending = false
    }

    /// Follows (`on`) or unfollows a user: 422 for oneself; 404 for no such user (or one
    /// that cannot be read: suspended), 403 to follow across a block (`Visibility.check`).
    /// A follow that already is (or an unfollow that is not) changes and records nothing.
    func set(following on: Bool, user target: Int64, by caller: Caller) throws -> State {
        guard target != caller.userID else { throw APIError.invalid("you cannot follow yourself") }
        if let remote, try remote.isRemote(target) {
            if on {
                let asked = try remote.request(target, by: caller)
                if asked.pending { return State(following: false, followersCount: asked.followersCount, pending: true) }
            } else {
                _ = try remote.withdraw(target, by: caller)
            }
        }
        let row = try pool.withTransaction { connection in
            try write(following: on, user: target, by: caller.userID, on: connection, committing: true)
        }
        try Visibility.check(.follow, Visibility.Target(refusal: row, gives: on))
        return State(following: on, followersCount: Int(try row.decode("followers_count", as: Int32.self)))
    }

    /// The same in the caller's transaction, as its first write (federation's inbox: a
    /// remote follow, or the Accept of ours).
    func set(following on: Bool, user target: Int64, by caller: Caller, on connection: PostgresConnection) throws -> State {
        guard target != caller.userID else { throw APIError.invalid("you cannot follow yourself") }
        let row = try write(following: on, user: target, by: caller.userID, on: connection, committing: false)
        try Visibility.check(.follow, Visibility.Target(refusal: row, gives: on))
        return State(following: on, followersCount: Int(try row.decode("followers_count", as: Int32.self)))
    }

    private func write(following on: Bool, user target: Int64, by me: Int64, on connection: PostgresConnection,
                       committing: Bool) throws -> PostgresRow {
        // Both users' follows and counters hold still, and the write below reads with a
        // snapshot taken after the locks (see FollowEdges, FeedEffects).
        try Write.take(.profiles([me, target]), on: connection)
        return try effects.run(on ? follow(target, by: me) : unfollow(target, by: me), on: connection, committing: committing).firstRow()
    }

    /// The user followed or unfollowed, `blocked` checked against the table under the locks
    /// (the caller's cached sets may be a moment old; only a follow gives, so only it asks).
    private func target(_ target: Int64, by me: Int64, checkingBlocks: Bool) -> Write.Target {
        let blocked: SQLQuery = checkingBlocks ? Visibility.blockedNow(between: "\(me)", and: "\(target)") : "false"
        return Write.Target(statement: """
            SELECT user_id, false AS tombstone, \(blocked) AS blocked
            FROM profiles WHERE user_id = \(target)\(Visibility.actable(author: "profiles.user_id"))
            """)
    }

    /// The follow, the counters and what follows from it; the refusal's columns and the
    /// followee's `followers_count` after it.
    private func follow(_ target: Int64, by me: Int64) -> Write {
        Write(
            locking: .held, target: self.target(target, by: me, checkingBlocks: true),
            steps: ["""
                made AS (
                    INSERT INTO follows (follower_id, followee_id, created_at)
                    SELECT \(me), user_id, \(effects.clock.now) FROM target WHERE NOT target.blocked
                    ON CONFLICT DO NOTHING RETURNING follower_id, followee_id
                )
                """, FollowEdges.counting("made", sign: "+")],
            events: [(.followChanged, FollowEdges.events("made", following: true, actor: "\(me)"))],
            profilesCounted: "counted", answer: answer(target))
    }

    private func unfollow(_ target: Int64, by me: Int64) -> Write {
        Write(
            locking: .held, target: self.target(target, by: me, checkingBlocks: false),
            steps: [FollowEdges.removal(where: "f.follower_id = \(me) AND f.followee_id = \(target)")],
            events: [(.followChanged, FollowEdges.events("gone", following: false, actor: "\(me)"))],
            profilesCounted: "counted", answer: answer(target))
    }

    /// The followee's count: as the write left it, or as it was when nothing changed.
    private func answer(_ target: Int64) -> SQLQuery {
        """
        SELECT \(Write.refusal),
               coalesce((SELECT followers_count FROM counted WHERE user_id = \(target)),
                        (SELECT followers_count FROM profiles WHERE user_id = \(target)), 0) AS followers_count
        """
    }

    enum Side: Sendable {
        case followers, following

        /// The listed user's column, and the column of the user whose page it is.
        var listed: String { self == .followers ? "follower_id" : "followee_id" }
        var owner: String { self == .followers ? "followee_id" : "follower_id" }
    }

    struct Listed: Sendable {
        let profilesJSON: [UInt8]
        let nextCursor: KeysetCursor?
    }

    /// A user's followers (or the users it follows), newest follow first, without those the
    /// caller blocked, was blocked by or muted; nil when there is no such user.
    func list(_ side: Side, of userID: Int64, caller: Caller?, _ request: PageRequest<KeysetCursor>) throws -> Listed? {
        var page: SQLQuery = """
            SELECT f.created_at AS listed_at, f.\(unsafeSQL: side.listed) AS listed_id, \(unsafeSQL: ProfileShape.columns)\(ProfileShape.followedByMe(caller: caller))
            FROM follows f JOIN profiles pr ON pr.user_id = f.\(unsafeSQL: side.listed)
            WHERE f.\(unsafeSQL: side.owner) = owner.user_id
            """
        page.append(Visibility.visible(on: .people, author: "f.\(side.listed)", to: caller, suspendedFlag: "pr.suspended"))
        if let cursor = request.cursor { page.append(cursor.before(created: "f.created_at", id: "f.\(side.listed)")) }
        page.append(" ORDER BY f.created_at DESC, f.\(unsafeSQL: side.listed) DESC LIMIT \(literal: request.limit + 1)")
        // The owner's existence and its page in one statement, as /children does.
        let query: SQLQuery = """
            SELECT l.* FROM (SELECT user_id FROM profiles WHERE user_id = \(userID)) owner
            LEFT JOIN LATERAL (\(page)) l ON true
            """
        return try pool.withReadConnection { connection -> Listed? in
            let result = try connection.query(query)
            guard result.rowCount > 0 else { return nil }
            let rows = try result.rows.filter { try !$0.isNull("listed_id") }
            guard let first = rows.first else { return Listed(profilesJSON: Array("[]".utf8), nextCursor: nil) }
            let profile = try first.position(of: "user_id")
            let followedByMe = caller == nil ? nil : try first.position(of: "followed_by_me")
            let (json, last) = try RowJSON.page(rows, limit: request.limit) { row, out in
                try ProfileShape.append(row, from: profile, followedByMe: followedByMe, to: &out)
            }
            let next = try last.map { KeysetCursor(createdAt: try $0.decode("listed_at"), id: try $0.decode("listed_id")) }
            return Listed(profilesJSON: json, nextCursor: next)
        }
    }
}
