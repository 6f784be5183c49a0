import HTTP
import Postgres

/// Bearer tokens: 32 random bytes in base64url, handed out once and stored only as their
/// SHA-256 (computed by PostgreSQL), so the table never holds a usable credential.
struct Tokens: Sendable {
    var pool: ConnectionPool
    /// `TOKEN_TTL`: a token unused this long is dead (401, like a revoked one).
    var lifetimeSeconds: Int64 = 90 * 24 * 3600
    /// What "now" is for a token's last use, its expiry and its revocation (tests advance it).
    let clock: ServerClock
    /// How stale `last_used_at` may get before a use writes it again: a minute spares the
    /// database a write per request, and a quarter of the lifetime keeps a short one (a
    /// test's few seconds) sliding, so a token used more often than that never dies.
    var renewalSeconds: Double { min(60, Double(lifetimeSeconds) / 4) }
    /// The callers' blocks and mutes, by version (see `RelationsCache`).
    var relations = RelationsCache()

    /// A new token's text: 32 bytes from the system's CSPRNG (getrandom), base64url, no padding.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Base64URL.encode(bytes)
    }

    /// Issues a token for the user, inside the caller's transaction; returns its text.
    func issue(userID: Int64, deviceID: String?, on connection: PostgresConnection) throws -> String {
        let token = Self.generate()
        try connection.query("""
            INSERT INTO tokens (token_hash, user_id, device_id, last_used_at, created_at)
            VALUES (sha256(convert_to(\(token), 'UTF8')), \(userID), \(deviceID), \(clock.now), \(clock.now))
            """)
        return token
    }

    /// The caller a token stands for, or nil when it was never issued, is revoked or has
    /// not been used for `lifetimeSeconds` (the lifetime slides with each use). On the path
    /// of every authenticated request: one lookup in the token_hash index, and a write of
    /// `last_used_at` at most once per `renewalSeconds` (a minute at most) per token.
    func caller(presenting token: String) throws -> CallerCache.Entry? {
        guard Base64URL.isToken(token) else { return nil }
        return try pool.withConnection { connection -> CallerCache.Entry? in
            guard let row = try connection.query("""
                SELECT tokens.id, tokens.user_id, tokens.last_used_at < \(clock.now) - make_interval(secs => \(renewalSeconds)) AS stale,
                       floor(extract(epoch FROM tokens.last_used_at) * 1000)::bigint AS last_used_ms,
                       (SELECT relations_version FROM users WHERE users.id = tokens.user_id) AS relations_version
                FROM tokens WHERE NOT EXISTS (SELECT 1 FROM users WHERE users.id = tokens.user_id AND \(Visibility.accountSuspended("users"))) AND token_hash = sha256(convert_to(\(token), 'UTF8')) AND revoked_at IS NULL
                AND last_used_at > \(clock.now) - make_interval(secs => \(Double(lifetimeSeconds)))
                """).first else { return nil }
            let userID: Int64 = try row.decode("user_id")
            let version: Int64 = try row.decode("relations_version", as: Int64?.self) ?? 0
            let caller = Caller(userID: userID, tokenID: try row.decode("id"),
                                relations: try relations.relations(of: userID, version: version, on: connection))
            var lastUsed: Int64 = try row.decode("last_used_ms")
            if try row.decode("stale", as: Bool.self), let tokenID = caller.tokenID {
                try connection.query("UPDATE tokens SET last_used_at = \(clock.now) WHERE id = \(tokenID)")
                lastUsed = clock.millisecondsSince1970
            }
            var entry = CallerCache.Entry(caller: caller, relationsVersion: version)
            entry.renewalDue = lastUsed + Int64(renewalSeconds * 1000)
            return entry
        }
    }

    /// The proof that a remembered token's caller is still current (`CallerCache`): the
    /// conditions of `caller(presenting:)`, and the version of the caller's relations. (Its
    /// last use falling due is the entry's `renewalDue`, checked in memory: the proof has
    /// no time in it, so it is built once per entry.)
    func proof(of entry: CallerCache.Entry) -> Precondition.Statement {
        Precondition.Statement("""
            CASE WHEN EXISTS (
                SELECT 1 FROM tokens t JOIN users u ON u.id = t.user_id
                WHERE t.id = \(entry.caller.tokenID) AND t.user_id = \(entry.caller.userID) AND t.revoked_at IS NULL
                  AND \(Visibility.accountActive("u")) AND u.relations_version = \(entry.relationsVersion)
            ) THEN true ELSE caller_refuted() END
            """)
    }

    func revoke(tokenID: Int64) throws {
        try pool.withConnection { connection in
            try connection.query("UPDATE tokens SET revoked_at = \(clock.now) WHERE id = \(tokenID) AND revoked_at IS NULL")
        }
    }
}
