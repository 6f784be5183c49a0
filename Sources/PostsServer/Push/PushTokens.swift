import Postgres

/// The caller's push tokens (API.md "Push"): where each of their phones can be reached. A
/// token names one device: registered by another account (someone else signed in on that
/// phone), it moves there, so a phone is never pushed another person's notifications.
struct PushTokens: Sendable {
    var pool: ConnectionPool
    /// A registration's `created_at`, from which `PUSH_TOKEN_RETENTION` counts.
    let clock: ServerClock

    /// Tokens kept per user: registering one more drops the user's least recently
    /// registered, so that a reinstalled app's dead tokens do not pile up.
    static let maxPerUser = 20

    /// Registers (or registers again, moves, updates the device of) a token, and answers
    /// the stored row's JSON. A registration counts from now: the tokens kept are the
    /// user's most recently registered.
    func register(_ input: PushTokenInput.Valid, for caller: Caller) throws -> JSONObject {
        try pool.withTransaction { connection in
            // Registrations of one user one at a time, so that two at once cannot both see
            // room for one more (no key share: likes and posts of the user never wait).
            try connection.query("SELECT 1 FROM users WHERE id = \(caller.userID) FOR NO KEY UPDATE")
            let row = try connection.query("""
                INSERT INTO push_tokens (platform, token, user_id, device_id, created_at)
                VALUES (\(input.platform.rawValue), \(input.token), \(caller.userID), \(input.deviceID), \(clock.now))
                ON CONFLICT (platform, token) DO UPDATE
                    SET user_id = EXCLUDED.user_id, device_id = EXCLUDED.device_id, created_at = EXCLUDED.created_at
                RETURNING platform, token, device_id, created_at
                """).firstRow()
            try connection.query("""
                DELETE FROM push_tokens t USING (
                    SELECT platform, token FROM push_tokens WHERE user_id = \(caller.userID)
                    ORDER BY (platform, token) = (\(input.platform.rawValue), \(input.token)) DESC, created_at DESC, platform, token
                    OFFSET \(literal: Self.maxPerUser)
                ) old
                WHERE t.platform = old.platform AND t.token = old.token
                """)
            var token = JSONObject()
            token.add("platform", try row.decode("platform", as: String.self))
            token.add("token", try row.decode("token", as: String.self))
            token.add("device_id", try row.decode("device_id", as: String?.self))
            token.add("created_at", try row.decode("created_at", as: PostgresTimestamp.self))
            return token
        }
    }

    /// Removes one of the caller's tokens; false when the caller has no such token (none,
    /// or another user's: that one stays where it is).
    func remove(_ input: PushTokenInput.Valid, for caller: Caller) throws -> Bool {
        try pool.withConnection { connection in
            try connection.query("""
                DELETE FROM push_tokens
                WHERE platform = \(input.platform.rawValue) AND token = \(input.token) AND user_id = \(caller.userID)
                """).affectedRows > 0
        }
    }
}
