import Foundation
import HTTP
import Postgres

/// `GET /api/moderation/users?q=` (moderators and admins): someone by id, by email or by
/// username (its exact name, or names it begins), at most 20, each with what a moderator
/// decides by: the account (role, suspension), the profile, open sessions, the reports
/// against them (on them, their posts or their comments) and their latest posts. Nothing
/// is hidden from a moderator here, suspended users least of all (that is the point): it
/// is not one of `Visibility`'s reader surfaces.
struct UserLookup: Sendable {
    var pool: ConnectionPool
    /// What a live session is (`TOKEN_TTL`, revocation): the count is of those the Users
    /// page lists, not of expired tokens.
    let sessions: Sessions

    static let maxResults = 20

    func find(_ text: String) throws -> [UInt8] {
        let query = text.trimmingCharacters(in: .whitespaces)
        let id = Int64(pathParameter: query) ?? 0
        let rows = try pool.withConnection { connection in
            try connection.query("""
                SELECT u.id, u.email, u.role, \(Visibility.accountSuspended("u")) AS suspended, u.created_at AS signed_up,
                       (SELECT count(*) FROM tokens t WHERE t.user_id = u.id AND \(sessions.live("t"))) AS sessions,
                       (SELECT count(*) FROM reports r WHERE r.target_user_id = u.id) AS reports_against,
                       (SELECT coalesce(json_agg(json_build_object('id', lp.id, 'title', lp.title,
                                                                   'created_at', to_char(lp.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                                                 ORDER BY lp.created_at DESC), '[]')::text
                        FROM (SELECT id, title, created_at FROM posts WHERE user_id = u.id AND NOT deleted
                              ORDER BY created_at DESC LIMIT 5) lp) AS latest_posts,
                       pr.user_id IS NOT NULL AS has_profile, \(unsafeSQL: ProfileShape.columns)
                FROM users u LEFT JOIN profiles pr ON pr.user_id = u.id
                WHERE u.email <> \(ReservedUser.email)
                  AND (u.id = \(id) OR u.email = lower(\(query))
                       OR pr.search_username LIKE replace(replace(replace(search_fold(\(query)), '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%')
                ORDER BY (u.id = \(id) OR u.email = lower(\(query)) OR lower(pr.username) = lower(\(query))) DESC, u.id
                LIMIT \(literal: Self.maxResults)
                """).rows
        }
        var users: [JSONObject] = []
        for row in rows {
            var user = JSONObject()
            user.add("id", try row.decode("id", as: Int64.self))
            user.add("email", try row.decode("email", as: String.self))
            user.add("role", try row.decode("role", as: String.self))
            user.add("suspended", try row.decode("suspended", as: Bool.self))
            user.add("created_at", try row.decode("signed_up", as: PostgresTimestamp.self))
            var found = JSONObject()
            found.add("user", user)
            if try row.decode("has_profile", as: Bool.self) {
                var profile: [UInt8] = []
                try ProfileShape.append(row, from: try row.position(of: "user_id"), to: &profile)
                found.addRaw("profile", profile)
            } else {
                found.add("profile", nil as String?)
            }
            found.add("sessions", try row.decode("sessions", as: Int64.self))
            found.add("reports_against", try row.decode("reports_against", as: Int64.self))
            found.addRaw("posts", Array(try row.decode("latest_posts", as: String.self).utf8))
            users.append(found)
        }
        var answer = JSONObject.success()
        answer.add("users", users)
        return answer.finished
    }
}
