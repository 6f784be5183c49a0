import Postgres

/// Profiles: read one, read the caller's own with its account, change the caller's own.
/// Profiles come back as API.md's JSON, written by `ProfileShape`.
struct ProfileService: Sendable {
    var pool: ConnectionPool
    let effects: EventEffects
    /// Where a replaced avatar's deletion is queued.
    let images: ImageStore

    /// One profile; with a caller, its `followed_by_me`.
    func profile(of userID: Int64, caller: Caller? = nil) throws -> [UInt8]? {
        try pool.withReadConnection { connection in
            guard let row = try connection.query("""
                SELECT \(unsafeSQL: ProfileShape.columns)\(ProfileShape.followedByMe(caller: caller))
                FROM profiles pr WHERE pr.user_id = \(userID)
                """).first else { return nil }
            var out: [UInt8] = []
            try ProfileShape.append(row, followedByMe: caller == nil ? nil : ProfileShape.shape.columnCount, to: &out)
            return out
        }
    }

    struct Me: Sendable {
        let email: String
        let profile: [UInt8]
        let role: String
        let suspended: Bool
    }

    func me(_ userID: Int64) throws -> Me? {
        try pool.withReadConnection { connection in
            guard let row = try connection.query("""
                SELECT \(unsafeSQL: ProfileShape.columns), u.email, u.role, \(Visibility.accountSuspended("u")) AS suspended
                FROM users u JOIN profiles pr ON pr.user_id = u.id WHERE u.id = \(userID)
                """).first else { return nil }
            var profile: [UInt8] = []
            try ProfileShape.append(row, to: &profile)
            return Me(email: try row.decode("email"), profile: profile, role: try row.decode("role"),
                      suspended: try row.decode("suspended"))
        }
    }

    /// Applies a validated patch and answers the profile as changed; 409 when the username
    /// is taken by someone else, whatever its case. An avatar it replaces is queued for
    /// deletion in the same transaction.
    func update(_ userID: Int64, with patch: ProfilePatch) throws -> [UInt8] {
        let avatarGiven: Bool
        let avatar: String?
        switch patch.avatar {
        case .keep: (avatarGiven, avatar) = (false, nil)
        case .clear: (avatarGiven, avatar) = (true, nil)
        case .set(let url): (avatarGiven, avatar) = (true, url)
        }
        do {
            return try pool.withTransaction { connection -> [UInt8] in
                // The profile's lock before the write (its change carries its counters).
                // The target reads the row once the lock is ours and before the update (a
                // locking read of the newest version: another change of the avatar may have
                // committed while this one waited): the avatar this one replaces.
                let write = Write(
                    locking: .first(.profiles([userID])),
                    target: Write.Target(statement: "SELECT user_id, avatar_url FROM profiles WHERE user_id = \(userID)",
                                         tail: "FOR NO KEY UPDATE"),
                    steps: ["""
                        pr AS (
                            UPDATE profiles p SET
                                username = coalesce(\(patch.username), p.username),
                                full_name = coalesce(\(patch.fullName), p.full_name),
                                bio = coalesce(\(patch.bio), p.bio),
                                avatar_url = CASE WHEN \(avatarGiven) THEN \(avatar)::text ELSE p.avatar_url END
                            FROM target previous
                            WHERE p.user_id = previous.user_id
                            RETURNING p.*, previous.avatar_url AS previous_avatar
                        )
                        """],
                    events: [(.profileUpdated, EventTable.profileUpdated.cte(
                        ["seq": "1", "user_id": "pr.user_id", "json": "\(unsafeSQL: ProfileShape.json)"], "FROM pr"))],
                    answer: "SELECT \(unsafeSQL: ProfileShape.columns), previous_avatar FROM pr")
                let row = try effects.run(write, on: connection).first
                guard let row, let profile = try Self.json(row) else { throw APIError.notFound("no profile for this user") }
                let previous: String? = try row.decode("previous_avatar")
                if avatarGiven, previous != avatar { try images.drop([previous], on: connection) }
                return profile
            }
        } catch let error as PostgresError where error.sqlState == .uniqueViolation {
            throw APIError.conflict("that username is taken")
        }
    }

    private static func json(_ row: PostgresRow?) throws -> [UInt8]? {
        guard let row else { return nil }
        var out: [UInt8] = []
        try ProfileShape.append(row, to: &out)
        return out
    }
}
