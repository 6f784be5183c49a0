import Postgres

/// API.md's Comment, with its author's whole profile: its members in one list (see
/// `ResourceShape`). Queries name the comment `c` and the author's profile `pr`.
enum CommentShape {
    static let shape = ResourceShape([
        ResourceField("id", "c.id", .uuid),
        ResourceField("post_id", "c.post_id", .integer),
        ResourceField("user_id", "c.user_id", .integer),
        ResourceField("body", "c.body", .text),
        ResourceField("created_at", "c.created_at", .time),
        ResourceField("profile", "pr", .object(ProfileShape.shape)),
    ])

    /// Aliased by key (`id`, `created_at`, …; the profile's as `profile_user_id`, …), so a
    /// query over a subquery of these sorts by `created_at, id`.
    static let columns = shape.selectList()

    /// The comment as a `json` expression, for the change a write records.
    static let json = shape.jsonSQL

    /// Joins the author's profile.
    static let authorJoin = "JOIN profiles pr ON pr.user_id = c.user_id"

    static func append(_ row: PostgresRow, to out: inout [UInt8]) throws {
        try shape.append(row, to: &out)
    }

    static func cursor(after row: PostgresRow) throws -> CommentCursor {
        CommentCursor(createdAt: try row.decode(at: 4), id: try row.decode(at: 0))
    }
}
