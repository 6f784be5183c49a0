import Postgres

/// Suspending a user (API.md "Safety"): its tokens are revoked at once, sign-in refuses it
/// (403), and its posts and comments disappear from every read until it is unsuspended,
/// when they come back unchanged (nothing is deleted: the profile's flag hides them).
enum Suspension {
    static let refusal = Visibility.suspendedAccount

    /// Suspends or restores the user in the caller's transaction, as of the clock's now;
    /// false when there is no such user.
    static func set(_ suspended: Bool, user userID: Int64, at clock: ServerClock, on connection: PostgresConnection) throws -> Bool {
        let found = try connection.query("""
            WITH u AS (
                UPDATE users SET suspended_at = CASE WHEN \(suspended) THEN coalesce(suspended_at, \(clock.now)) END
                WHERE id = \(userID) RETURNING id
            ),
            pr AS (UPDATE profiles SET suspended = \(suspended) WHERE user_id = (SELECT id FROM u) RETURNING user_id),
            revoked AS (
                UPDATE tokens SET revoked_at = \(clock.now)
                WHERE \(suspended) AND user_id = (SELECT id FROM u) AND revoked_at IS NULL RETURNING id
            )
            SELECT count(*) AS found FROM u
            """).firstRow().decode("found", as: Int.self)
        return found == 1
    }

    /// Whether the user is suspended (sign-in asks, in the transaction that issues a token:
    /// the share lock makes a suspension wait for it, and then revoke the token it made).
    static func isSuspended(_ userID: Int64, on connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT \(Visibility.accountSuspended("users")) AS suspended FROM users WHERE id = \(userID) FOR SHARE")
            .first?.decode("suspended", as: Bool.self) ?? false
    }
}
