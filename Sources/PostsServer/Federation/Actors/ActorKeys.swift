import Postgres
import Synchronization

/// Our actors' RSA keys (API.md "Actors": RSA 2048, made once per user and kept). A key is
/// read, or made outside any connection (a second or so of CPU) and stored unless another
/// request stored one first, whose key is then everyone's. Kept in memory once read: a
/// key never changes.
final class ActorKeys: Sendable {
    struct Key: Sendable {
        let privateKeyPEM: String
        let publicKeyPEM: String
    }

    private let pool: ConnectionPool
    private let clock: ServerClock
    private let known = Mutex<[Int64?: Key]>([:])

    init(pool: ConnectionPool, clock: ServerClock) {
        self.pool = pool
        self.clock = clock
    }

    /// Forgets the keys read (a restored snapshot may hold others).
    func forget() {
        known.withLock { $0.removeAll() }
    }

    /// The user's key (nil: the instance actor's).
    func key(of user: Int64?) throws -> Key {
        if let key = known.withLock({ $0[user] }) { return key }
        let key = try read(user) ?? make(for: user)
        known.withLock { $0[user] = key }
        return key
    }

    private func make(for user: Int64?) throws -> Key {
        let pair = try RequestSigning.makeKeyPair()
        try pool.withConnection { connection in
            _ = try connection.query("""
                INSERT INTO actor_keys (user_id, private_key_pem, public_key_pem, created_at)
                SELECT \(user), \(pair.privateKeyPEM), \(pair.publicKeyPEM), \(clock.now)
                WHERE \(user)::bigint IS NULL OR EXISTS (SELECT 1 FROM users WHERE id = \(user))
                ON CONFLICT DO NOTHING
                """)
        }
        guard let key = try read(user) else { throw APIError.notFound("no such user") }
        return key
    }

    private func read(_ user: Int64?) throws -> Key? {
        try pool.withConnection { connection in
            let rows = try connection.query("""
                SELECT private_key_pem, public_key_pem FROM actor_keys
                WHERE user_id = \(user) OR (\(user)::bigint IS NULL AND user_id IS NULL)
                """).rows
            return try rows.first.map { Key(privateKeyPEM: try $0.decode("private_key_pem"), publicKeyPEM: try $0.decode("public_key_pem")) }
        }
    }
}
