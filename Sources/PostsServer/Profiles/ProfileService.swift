import HTTP
import Postgres

/// Profiles: read one, read the caller's own with its account, change the caller's own.
struct ProfileService: Sendable {
    let pool: ConnectionPool

    func profile(of userID: Int64) throws -> Profile? {
        try pool.withConnection { connection in
            try connection.query("SELECT \(unsafeSQL: Profile.columns) FROM profiles WHERE user_id = \(userID)")
                .first.map(Profile.init(row:))
        }
    }

    struct Me: Sendable {
        let email: String
        let profile: Profile
    }

    func me(_ userID: Int64) throws -> Me? {
        try pool.withConnection { connection in
            guard let row = try connection.query("""
                SELECT u.email, p.user_id, p.username, p.full_name, p.bio, p.avatar_url, p.created_at
                FROM users u JOIN profiles p ON p.user_id = u.id WHERE u.id = \(userID)
                """).first else { return nil }
            return Me(email: try row.decode("email"), profile: try Profile(row: row))
        }
    }

    /// Applies a validated patch in one statement; 409 when the username is taken by
    /// someone else, whatever its case.
    func update(_ userID: Int64, with patch: ProfilePatch) throws -> Profile {
        let avatarGiven: Bool
        let avatar: String?
        switch patch.avatar {
        case .keep: (avatarGiven, avatar) = (false, nil)
        case .clear: (avatarGiven, avatar) = (true, nil)
        case .set(let url): (avatarGiven, avatar) = (true, url)
        }
        do {
            let row = try pool.withConnection { connection in
                // The profile's lock before the write, and its change in the same statement.
                try connection.query("""
                    WITH lock AS (\(ChangeLog.lock(profile: userID))),
                    p AS (
                        UPDATE profiles SET
                            username = coalesce(\(patch.username), username),
                            full_name = coalesce(\(patch.fullName), full_name),
                            bio = coalesce(\(patch.bio), bio),
                            avatar_url = CASE WHEN \(avatarGiven) THEN \(avatar)::text ELSE avatar_url END
                        WHERE user_id = \(userID) AND (SELECT count(*) FROM lock) >= 0
                        RETURNING *
                    ),
                    recorded AS (
                        INSERT INTO changes (type, user_id, data)
                        SELECT 'profile.updated', p.user_id, json_build_object('profile', profile_json(p::profiles)) FROM p
                    )
                    SELECT \(unsafeSQL: Profile.columns) FROM p
                    """).first
            }
            guard let row else { throw HTTPError.notFound("no profile for this user") }
            return try Profile(row: row)
        } catch let error as PostgresError where error.sqlState == .uniqueViolation {
            throw HTTPError(.conflict, message: "that username is taken")
        }
    }
}
