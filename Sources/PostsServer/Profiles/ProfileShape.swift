import Postgres

/// API.md's Profile: its members in one list (see `ResourceShape`). Queries name the
/// profiles row `pr`.
enum ProfileShape {
    static let shape = ResourceShape([
        ResourceField("user_id", "pr.user_id", .integer),
        ResourceField("username", "pr.username", .text),
        ResourceField("full_name", "pr.full_name", .text),
        ResourceField("bio", "pr.bio", .text),
        ResourceField("avatar_url", "pr.avatar_url", .text),
        ResourceField("created_at", "pr.created_at", .time),
        ResourceField("followers_count", "pr.followers_count", .count),
        ResourceField("following_count", "pr.following_count", .count),
        ResourceField("posts_count", "pr.posts_count", .count),
        // API.md "Remote people": `user@domain` for another server's account, the username for ours.
        ResourceField("acct", "coalesce(pr.acct, pr.username)", .text),
        ResourceField("remote", "pr.acct IS NOT NULL", .flag),
    ])

    static let columns = shape.selectList()

    /// The profile as a `json` expression, for the events a write records.
    static let json = shape.jsonSQL

    /// The profile whose columns start at `first`, as a JSON object; with `followedByMe`,
    /// the column that holds it (see `followedByMe(caller:)`).
    static func append(_ row: PostgresRow, from first: Int = 0, followedByMe: Int? = nil, to out: inout [UInt8]) throws {
        guard let followedByMe else { return try shape.append(row, from: first, to: &out) }
        try shape.append(row, from: first, to: &out) { out in
            out += #","followed_by_me":"#.utf8
            out += (try row.bool(at: followedByMe) ? "true" : "false").utf8
        }
    }

    /// With a caller, `followed_by_me` as a column to add to the select list (one probe of
    /// the follows' primary key per row, in the same query); nothing without one.
    static func followedByMe(caller: Caller?) -> SQLQuery {
        guard let caller else { return "" }
        return ", EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = \(caller.userID) AND f.followee_id = pr.user_id) AS followed_by_me"
    }
}
