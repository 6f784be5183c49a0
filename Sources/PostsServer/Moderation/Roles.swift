import Postgres

/// `posts-server role EMAIL ROLE` (API.md "Safety"): only the operator grants roles.
public enum Roles {
    public static let names = ["user", "moderator", "admin"]

    public struct Change: Sendable {
        public let previous: String
        public let now: String
    }

    /// Gives the user with that address (any case) the role; nil when there is no such user.
    public static func grant(_ role: String, toEmail email: String, conninfo: String) throws -> Change? {
        guard names.contains(role) else { throw Configuration.Invalid(description: "ROLE must be user, moderator or admin, not \"\(role)\"") }
        let connection = try PostgresConnection(conninfo: conninfo)
        let row = try connection.query("""
            WITH old AS (SELECT id, role FROM users WHERE email = lower(\(email)) FOR UPDATE)
            UPDATE users u SET role = \(role) FROM old WHERE u.id = old.id RETURNING old.role AS previous, u.role AS now
            """).first
        guard let row else { return nil }
        return Change(previous: try row.decode("previous"), now: try row.decode("now"))
    }
}
