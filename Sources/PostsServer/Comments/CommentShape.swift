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
        ResourceField("reply_to", "c.reply_to", .uuid),
        ResourceField("reply_count", "c.reply_count", .count),
        ResourceField("like_count", "c.like_count", .count),
        ResourceField("mentions", "c.mentions", .jsonArray),
        ResourceField("tags", "c.tags", .jsonArray),
        ResourceField("profile", "pr", .object(ProfileShape.shape)),
    ])

    /// Aliased by key (`id`, `created_at`, …; the profile's as `profile_user_id`, …), so a
    /// query over a subquery of these sorts by `created_at, id`.
    static let columns = shape.selectList()

    /// The comment as a `json` expression, for the events a write records.
    static let json = shape.jsonSQL

    /// Joins the author's profile.
    static let authorJoin = "JOIN profiles pr ON pr.user_id = c.user_id"

    /// With a caller, `liked_by_me` follows the shape's columns (one probe of the likes'
    /// primary key per row, inside the same query): add this to the select list.
    static func likedByMe(caller: Caller?) -> SQLQuery {
        guard let caller else { return "" }
        return ", EXISTS (SELECT 1 FROM comment_likes cl WHERE cl.comment_id = c.id AND cl.user_id = \(caller.userID)) AS liked_by_me"
    }

    private static let likedByMeColumn = shape.columnCount

    /// One comment as a JSON object; `withLiked` when the query selected `liked_by_me`.
    static func append(_ row: PostgresRow, withLiked: Bool = false, to out: inout [UInt8]) throws {
        guard withLiked else { return try shape.append(row, to: &out) }
        try shape.append(row, to: &out) { out in
            out += #","liked_by_me":"#.utf8
            out += (try row.bool(at: likedByMeColumn) ? "true" : "false").utf8
        }
    }

    static func cursor(after row: PostgresRow) throws -> CommentCursor {
        CommentCursor(createdAt: try row.decode("created_at"), id: try row.decode("id"))
    }
}
