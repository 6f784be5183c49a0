import Postgres

/// A user's provider identities: the list `GET /api/me/identities` shows and the unlink of
/// one, which may not take the account's last way in (its identities, and email codes when
/// its email is a real address).
struct Identities: Sendable {
    var pool: ConnectionPool
    let providers: [OIDCProvider]

    enum Unlink {
        case removed
        case notFound
        case lastWayIn
    }

    /// `[{"id","provider","issuer","email","created_at"}]`, oldest first.
    func list(of caller: Caller) throws -> [JSONObject] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT id, issuer, email, created_at FROM identities WHERE user_id = \(caller.userID) ORDER BY id
                """).rows.map { row in
                let issuer: String = try row.decode("issuer")
                var identity = JSONObject()
                identity.add("id", try row.decode("id", as: Int64.self))
                identity.add("provider", providers.first { $0.issuer == issuer }?.name)
                identity.add("issuer", issuer)
                identity.add("email", try row.decode("email", as: String?.self))
                identity.add("created_at", try row.decode("created_at", as: PostgresTimestamp.self))
                return identity
            }
        }
    }

    /// One statement: the identity goes only if another way in remains. Serializable: two
    /// unlinks of an account's last two identities at once would otherwise each count the
    /// other's as remaining (one of them is run again, and then refused).
    func unlink(_ id: Int64, of caller: Caller) throws -> Unlink {
        let row = try pool.withTransaction(isolation: .serializable) { connection in
            try connection.queryCommitting("""
                WITH mine AS (
                    SELECT i.id, u.email FROM identities i JOIN users u ON u.id = i.user_id
                    WHERE i.id = \(id) AND i.user_id = \(caller.userID) FOR UPDATE OF i
                ), others AS (
                    SELECT count(*) AS n FROM identities WHERE user_id = \(caller.userID) AND id <> \(id)
                ), removed AS (
                    DELETE FROM identities WHERE id IN (SELECT id FROM mine)
                      AND ((SELECT n FROM others) > 0 OR (SELECT email FROM mine) NOT LIKE '%@identities.invalid')
                    RETURNING id
                )
                SELECT EXISTS (SELECT 1 FROM mine) AS found, EXISTS (SELECT 1 FROM removed) AS removed
                """).firstRow()
        }
        guard try row.decode("found", as: Bool.self) else { return .notFound }
        return try row.decode("removed", as: Bool.self) ? .removed : .lastWayIn
    }
}
