import HTTP
import Postgres

/// API.md's Post, read from a query's rows by column position and written as JSON straight
/// from libpq's buffers into the answer: no `String` per field, no dictionary lookup per
/// column, no `JSONEncoder`. Every post query selects `columns` first, in this order.
enum PostRows {
    /// With a caller, `liked_by_me` follows as column 15 (one index probe per row, inside
    /// the same query): add `likedByMe(caller:)` to the select list.
    static let columns = """
        p.id, p.user_id, p.parent_id, p.title, p.summary, p.body, p.image_url, p.created_at, p.timezone, \
        p.location_tag, p.ai_generated, pr.username AS author_name, p.child_count, p.like_count, p.comment_count
        """

    /// Joins the author's profile for `author_name` (by primary key: no scan, no count).
    static let authorJoin = "LEFT JOIN profiles pr ON pr.user_id = p.user_id"

    static func likedByMe(caller: Caller?) -> SQLQuery {
        guard let caller else { return "" }
        return ", EXISTS (SELECT 1 FROM likes l WHERE l.post_id = p.id AND l.user_id = \(caller.userID)) AS liked_by_me"
    }

    private enum Column {
        static let id = 0, userID = 1, parentID = 2, title = 3, summary = 4, body = 5, imageURL = 6, createdAt = 7
        static let timezone = 8, locationTag = 9, aiGenerated = 10, authorName = 11, childCount = 12
        static let likeCount = 13, commentCount = 14, likedByMe = 15
    }

    /// The cursor that continues after this row.
    static func cursor(after row: PostgresRow) throws -> KeysetCursor {
        KeysetCursor(createdAt: try row.decode(at: Column.createdAt), id: try row.decode(at: Column.id))
    }

    static func id(of row: PostgresRow) throws -> Int64 { try row.decode(at: Column.id) }

    /// One post as a JSON object; `withLiked` when the query selected `liked_by_me`.
    static func append(_ row: PostgresRow, withLiked: Bool, to out: inout [UInt8]) throws {
        out += #"{"id":"#.utf8
        appendInteger(try row.decode(at: Column.id, as: Int64.self), to: &out)
        out += #","user_id":"#.utf8
        appendInteger(try row.decode(at: Column.userID, as: Int64.self), to: &out)
        out += #","parent_id":"#.utf8
        appendOptionalInteger(try row.decode(at: Column.parentID, as: Int64?.self), to: &out)
        RowJSON.appendText(#","title":"#, row, Column.title, to: &out)
        RowJSON.appendText(#","summary":"#, row, Column.summary, to: &out)
        RowJSON.appendText(#","body":"#, row, Column.body, to: &out)
        RowJSON.appendText(#","image_url":"#, row, Column.imageURL, to: &out)
        try RowJSON.appendTimestamp(#","created_at":"#, row, Column.createdAt, to: &out)
        RowJSON.appendText(#","timezone":"#, row, Column.timezone, to: &out)
        RowJSON.appendText(#","location_tag":"#, row, Column.locationTag, to: &out)
        out += #","ai_generated":"#.utf8
        out += (try row.decode(at: Column.aiGenerated, as: Bool.self) ? "true" : "false").utf8
        RowJSON.appendText(#","author_name":"#, row, Column.authorName, to: &out)
        out += #","child_count":"#.utf8
        appendInteger(Int64(try row.decode(at: Column.childCount, as: Int32.self)), to: &out)
        out += #","like_count":"#.utf8
        appendInteger(Int64(try row.decode(at: Column.likeCount, as: Int32.self)), to: &out)
        out += #","comment_count":"#.utf8
        appendInteger(Int64(try row.decode(at: Column.commentCount, as: Int32.self)), to: &out)
        if withLiked {
            out += #","liked_by_me":"#.utf8
            out += (try row.decode(at: Column.likedByMe, as: Bool.self) ? "true" : "false").utf8
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A JSON array of the rows' posts.
    static func appendArray(_ rows: ArraySlice<PostgresRow>, withLiked: Bool, to out: inout [UInt8]) throws {
        out.append(UInt8(ascii: "["))
        for (index, row) in zip(rows.indices, rows) {
            if index > rows.startIndex { out.append(UInt8(ascii: ",")) }
            try append(row, withLiked: withLiked, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    private static func appendOptionalInteger(_ value: Int64?, to out: inout [UInt8]) {
        if let value { appendInteger(value, to: &out) } else { out += "null".utf8 }
    }

    /// Decimal digits without making a `String`.
    static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(20 - count)...]))
        }
    }
}
