import Postgres

/// Users and their profiles as sign-in creates them: a user is made with a profile on first
/// sight (verify-code, or trust mode naming an unknown email), never one without the other.
struct Accounts: Sendable {
    let pool: ConnectionPool
    /// A new user's username is made from the email: never one holding a blocked word.
    var blockedWords = BlockedWords.off
    /// Trust mode's callers' blocks and mutes, by version (see `RelationsCache`).
    var relations = RelationsCache()
    /// What a new account is stamped with.
    var clock = ServerClock()

    struct Account: Sendable {
        let userID: Int64
        let isNew: Bool
        /// Its blocks and mutes (none for a new account).
        var relations = Relations()
        var relationsVersion: Int64 = 0
        var suspended = false
    }

    /// The user with this email; created, with a profile, if there is none.
    func findOrCreate(_ email: EmailAddress) throws -> Account {
        if let existing = try pool.withConnection({ try existingAccount(email, on: $0) }) { return existing }
        return try pool.withTransaction { try findOrCreate(email, on: $0) }
    }

    /// The same, inside the caller's transaction.
    func findOrCreate(_ email: EmailAddress, on connection: PostgresConnection) throws -> Account {
        let inserted = try connection.query("""
            INSERT INTO users (email, created_at) VALUES (\(email.value), \(clock.now)) ON CONFLICT (email) DO NOTHING RETURNING id
            """).first
        guard let inserted else {
            // Another request created it a moment ago, profile and all, in its transaction.
            guard let userID = try existingUser(email, on: connection) else {
                throw PostgresError(.server, details: "user \(email) neither inserted nor found")
            }
            return Account(userID: userID, isNew: false)
        }
        let userID: Int64 = try inserted.decode("id")
        let base = Username.base(for: email)
        try createProfile(userID: userID, base: blockedWords.allows(base) ? base : Username.fallbackBase, on: connection)
        return Account(userID: userID, isNew: true)
    }

    /// An existing user with its blocks and mutes, in one statement (trust mode resolves
    /// its caller with it on every request).
    private func existingAccount(_ email: EmailAddress, on connection: PostgresConnection) throws -> Account? {
        guard let row = try connection.query("""
            SELECT id, \(Visibility.accountSuspended("users")) AS suspended, relations_version FROM users WHERE email = \(email.value)
            """).first else { return nil }
        let userID: Int64 = try row.decode("id")
        let version: Int64 = try row.decode("relations_version")
        let relations = try relations.relations(of: userID, version: version, on: connection)
        return Account(userID: userID, isNew: false, relations: relations, relationsVersion: version,
                       suspended: try row.decode("suspended"))
    }

    /// The proof that a caller remembered by its email (trust mode) is still current
    /// (`CallerCache`): still that email's user, not suspended, relations as remembered.
    func proof(of entry: CallerCache.Entry) -> Precondition.Statement {
        Precondition.Statement("""
            CASE WHEN EXISTS (
                SELECT 1 FROM users u
                WHERE u.id = \(entry.caller.userID) AND u.email = \(entry.email) AND \(Visibility.accountActive("u"))
                  AND u.relations_version = \(entry.relationsVersion)
            ) THEN true ELSE caller_refuted() END
            """)
    }

    private func existingUser(_ email: EmailAddress, on connection: PostgresConnection) throws -> Int64? {
        try connection.query("SELECT id FROM users WHERE email = \(email.value)").first?.decode("id", as: Int64.self)
    }

    /// The first free username among the base and its numbered variants (each one index
    /// lookup), else the base with a random number; a name taken by a concurrent sign-up
    /// in between is simply tried again.
    private func createProfile(userID: Int64, base: String, on connection: PostgresConnection) throws {
        while true {
            let free: String? = try connection.query("""
                SELECT candidate FROM unnest(\(PostgresArray(candidates(from: base)))) WITH ORDINALITY AS c(candidate, n)
                WHERE NOT EXISTS (SELECT 1 FROM profiles WHERE lower(username) = candidate)
                ORDER BY n LIMIT 1
                """).first?.decode("candidate")
            let username = free ?? "\(base)\(Int.random(in: 100_000...999_999))"
            // A number can make a blocked word of its own (`x.88`): draw again.
            guard blockedWords.allows(username) else { continue }
            let created = try connection.query("""
                INSERT INTO profiles (user_id, username, created_at) VALUES (\(userID), \(username), \(clock.now))
                ON CONFLICT ((lower(username))) DO NOTHING
                """).affectedRows
            if created == 1 { return }
        }
    }

    /// `Username.candidates` less those the word filter refuses: the numbers appended can
    /// form a listed word of their own.
    private func candidates(from base: String) -> [String] {
        Username.candidates(from: base).filter(blockedWords.allows)
    }
}
