import Postgres

/// The user `deleted` (API.md "Sessions and the account"): tombstones of deleted accounts'
/// posts belong to it, so that clients decoding `user_id` as an integer keep working. A
/// real row, made by the first account deletion; its email is no address (sign-in and
/// trust mode take only addresses), so no one can ever sign in as it, and its username is
/// refused to everyone else (`Username.reserved`).
enum ReservedUser {
    static let username = "deleted"
    static let email = "<deleted>"

    /// Its id, made (with its profile) if this is the first deletion.
    static func id(clock: ServerClock, on connection: PostgresConnection) throws -> Int64 {
        if let id = try existing(on: connection) { return id }
        // A deletion that made it at the same moment wins; the next statement sees its row.
        try connection.query("""
            WITH made AS (INSERT INTO users (email, created_at) VALUES (\(email), \(clock.now)) ON CONFLICT (email) DO NOTHING RETURNING id)
            INSERT INTO profiles (user_id, username, created_at) SELECT id, \(username), \(clock.now) FROM made
            """)
        guard let id = try existing(on: connection) else {
            throw PostgresError(.decoding, details: "the reserved user was neither found nor made")
        }
        return id
    }

    private static func existing(on connection: PostgresConnection) throws -> Int64? {
        try connection.query("SELECT id FROM users WHERE email = \(email)").first?.decode("id", as: Int64.self)
    }
}
