import Postgres

/// API.md's Post: its members in one list (see `ResourceShape`). Queries name the post `p`
/// and its author's profile `pr` (`authorJoin`), and select `columns` first.
enum PostShape {
    static let shape = ResourceShape([
        ResourceField("id", "p.id", .integer),
        ResourceField("user_id", "p.user_id", .integer),
        ResourceField("parent_id", "p.parent_id", .integer),
        ResourceField("title", "p.title", .text),
        ResourceField("summary", "p.summary", .text),
        ResourceField("body", "p.body", .text),
        ResourceField("image_url", "p.image_url", .text),
        ResourceField("image_width", "p.image_width", .integer),
        ResourceField("image_height", "p.image_height", .integer),
        ResourceField("created_at", "p.created_at", .time),
        ResourceField("timezone", "p.timezone", .text),
        ResourceField("location_tag", "p.location_tag", .text),
        ResourceField("ai_generated", "p.ai_generated", .flag),
        ResourceField("author_name", "pr.username", .text),
        ResourceField("child_count", "p.child_count", .count),
        ResourceField("like_count", "p.like_count", .count),
        ResourceField("comment_count", "p.comment_count", .count),
        ResourceField("deleted", "p.deleted", .flag),
        ResourceField("mentions", "p.mentions", .jsonArray),
        ResourceField("tags", "p.tags", .jsonArray),
    ])

    static let columns = shape.selectList()

    /// The post as a `json` expression, for the events a write records.
    static let json = shape.jsonSQL

    /// Joins the author's profile for `author_name` (by primary key: no scan, no count).
    static let authorJoin = "LEFT JOIN profiles pr ON pr.user_id = p.user_id"

    /// With a caller, `liked_by_me` follows the shape's columns (one index probe per row,
    /// inside the same query): add this to the select list.
    static func likedByMe(caller: Caller?) -> SQLQuery {
        guard let caller else { return "" }
        return ", EXISTS (SELECT 1 FROM likes l WHERE l.post_id = p.id AND l.user_id = \(caller.userID)) AS liked_by_me"
    }

    /// `liked_by_me` follows the shape's columns: its position, known from the shape.
    private static let likedByMeColumn = shape.columnCount

    /// The cursor that continues after this row.
    static func cursor(after row: PostgresRow) throws -> KeysetCursor {
        KeysetCursor(createdAt: try row.decode("created_at"), id: try row.decode("id"))
    }

    /// One post as a JSON object; `withLiked` when the query selected `liked_by_me`.
    static func append(_ row: PostgresRow, withLiked: Bool, to out: inout [UInt8]) throws {
        guard withLiked else { return try shape.append(row, to: &out) }
        try shape.append(row, to: &out) { out in try appendLiked(row, to: &out) }
    }

    /// A JSON array of the rows' posts.
    static func appendArray(_ rows: ArraySlice<PostgresRow>, withLiked: Bool, to out: inout [UInt8]) throws {
        guard withLiked else { return try shape.appendArray(rows, to: &out) }
        try shape.appendArray(rows, to: &out) { row, out in try appendLiked(row, to: &out) }
    }

    private static func appendLiked(_ row: PostgresRow, to out: inout [UInt8]) throws {
        out += #","liked_by_me":"#.utf8
        out += (try row.bool(at: likedByMeColumn) ? "true" : "false").utf8
    }
}
