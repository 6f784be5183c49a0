import Postgres

/// Follows (API.md "Following"): idempotent writes that keep both users' counters exact
/// and say what happened (`follow_changed`: the write path records it and fills or empties
/// the follower's home feed, see `FeedEffects`), run as batches (`FollowBatch`); and the
/// followers and following pages.
struct FollowService: Sendable {
    var pool: ConnectionPool
    let effects: EventEffects
    /// Concurrent requests' follows, and their unfollows, one transaction a batch (`FollowBatch`).
    let coalescers: Coalescers
    /// With federation: follows of remote accounts wait for their Accept.
    var remote: RemoteFollows?

    struct Coalescers: Sendable {
        let follows: WriteCoalescer<FollowBatch>
        let unfollows: WriteCoalescer<FollowBatch>

        init(maxRunning: Int) {
            follows = WriteCoalescer(maxRunning: maxRunning)
            unfollows = WriteCoalescer(maxRunning: maxRunning)
        }
    }

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
        let follow = FollowBatch.Follow(follower: caller.userID, followee: target, precondition: pool.session.precondition)
        return try (on ? coalescers.follows : coalescers.unfollows)
            .submit(follow, running: FollowBatch(pool: pool, effects: effects, following: on))
    }

    /// The same in the caller's transaction, as its first write (federation's inbox: a
    /// remote follow, or the Accept of ours).
    func set(following on: Bool, user target: Int64, by caller: Caller, on connection: PostgresConnection) throws -> State {
        guard target != caller.userID else { throw APIError.invalid("you cannot follow yourself") }
        let follow = FollowBatch.Follow(follower: caller.userID, followee: target, precondition: nil)
        return try FollowBatch(pool: pool, effects: effects, following: on).run([follow], on: connection)[0].get()
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
