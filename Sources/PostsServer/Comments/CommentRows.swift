import Postgres

/// API.md's Comment written as JSON from a row of `CommentService`'s queries (the comment's
/// five columns, then its author's profile), by column position.
enum CommentRows {
    static func append(_ row: PostgresRow, to out: inout [UInt8]) throws {
        RowJSON.appendUUID(#"{"id":"#, row, 0, to: &out)
        out += #","post_id":"#.utf8
        PostRows.appendInteger(try row.decode(at: 1, as: Int64.self), to: &out)
        out += #","user_id":"#.utf8
        PostRows.appendInteger(try row.decode(at: 2, as: Int64.self), to: &out)
        RowJSON.appendText(#","body":"#, row, 3, to: &out)
        try RowJSON.appendTimestamp(#","created_at":"#, row, 4, to: &out)
        out += #","profile":"#.utf8
        try ProfileRows.append(row, from: 5, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    static func cursor(after row: PostgresRow) throws -> CommentCursor {
        CommentCursor(createdAt: try row.decode(at: 4), id: try row.decode(at: 0))
    }
}
