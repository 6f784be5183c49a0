import Postgres

/// The caller's sessions (API.md "Sessions and the account"): its live tokens, listed
/// without the token or its hash, and revoked one by one or all but the current one.
struct Sessions: Sendable {
    var pool: ConnectionPool
    /// A token unused this long is dead (`TOKEN_TTL`, sliding on `last_used_at`).
    let lifetimeSeconds: Int64
    /// What "now" is for a session's expiry and its revocation (the tokens' clock).
    let clock: ServerClock

    /// One session's members, in API.md's order; `current` follows (a bound comparison).
    static let shape = ResourceShape([
        ResourceField("id", "t.id", .integer),
        ResourceField("device_id", "t.device_id", .text),
        ResourceField("created_at", "t.created_at", .time),
        ResourceField("last_used_at", "t.last_used_at", .time),
    ])

    /// The live sessions of `userID`, newest first, as a JSON array.
    func list(of caller: Caller) throws -> [UInt8] {
        try pool.withConnection { connection in
            let rows = try connection.query("""
                SELECT \(unsafeSQL: Self.shape.selectList()), t.id = \(caller.tokenID) AS current
                FROM tokens t WHERE t.user_id = \(caller.userID) AND \(live("t"))
                ORDER BY t.created_at DESC, t.id DESC
                """).rows
            return try Self.array(rows)
        }
    }

    static func array(_ rows: [PostgresRow]) throws -> [UInt8] {
        var out: [UInt8] = []
        try shape.appendArray(rows[...], to: &out) { row, out in
            out += #","current":"#.utf8
            out += (try row.boolOrNil(at: shape.columnCount) ?? false ? "true" : "false").utf8
        }
        return out
    }

    /// Revokes one of the caller's live sessions; false when it names none.
    func revoke(_ id: Int64, of caller: Caller) throws -> Bool {
        try pool.withConnection { connection in
            try connection.query("""
                UPDATE tokens t SET revoked_at = \(clock.now) WHERE t.id = \(id) AND t.user_id = \(caller.userID) AND \(live("t"))
                """).affectedRows == 1
        }
    }

    /// Revokes every live session of the caller but the one it came with; how many.
    func revokeOthers(of caller: Caller) throws -> Int {
        try pool.withConnection { connection in
            try connection.query("""
                UPDATE tokens t SET revoked_at = \(clock.now)
                WHERE t.user_id = \(caller.userID) AND t.id IS DISTINCT FROM \(caller.tokenID) AND \(live("t"))
                """).affectedRows
        }
    }

    /// Not revoked, and used within the lifetime.
    func live(_ alias: String) -> SQLQuery {
        """
        \(unsafeSQL: alias).revoked_at IS NULL \
        AND \(unsafeSQL: alias).last_used_at > \(clock.now) - make_interval(secs => \(Double(lifetimeSeconds)))
        """
    }
}
