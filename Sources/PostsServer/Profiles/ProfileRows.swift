import HTTP
import Postgres

/// API.md's Profile written as JSON from a query's row, by column position, straight from
/// libpq's buffers (for pages of likers and of comments, each with a profile).
enum ProfileRows {
    /// The select list, in the order `append` reads it; `pr` is the profiles alias.
    static let columns = "pr.user_id, pr.username, pr.full_name, pr.bio, pr.avatar_url, pr.created_at"

    /// The profile whose columns start at `first`.
    static func append(_ row: PostgresRow, from first: Int, to out: inout [UInt8]) throws {
        out += #"{"user_id":"#.utf8
        PostRows.appendInteger(try row.decode(at: first, as: Int64.self), to: &out)
        RowJSON.appendText(#","username":"#, row, first + 1, to: &out)
        RowJSON.appendText(#","full_name":"#, row, first + 2, to: &out)
        RowJSON.appendText(#","bio":"#, row, first + 3, to: &out)
        RowJSON.appendText(#","avatar_url":"#, row, first + 4, to: &out)
        try RowJSON.appendTimestamp(#","created_at":"#, row, first + 5, to: &out)
        out.append(UInt8(ascii: "}"))
    }
}

/// Field writers shared by the row-to-JSON writers.
enum RowJSON {
    /// The rows of a page asked for with one row too many, as a JSON array of at most
    /// `limit` items, and the last item shown when more follow (for the next cursor).
    static func page(_ rows: [PostgresRow], limit: Int,
                     _ append: (PostgresRow, inout [UInt8]) throws -> Void) throws -> (json: [UInt8], lastBeforeMore: PostgresRow?) {
        let shown = rows.prefix(limit)
        var json: [UInt8] = [UInt8(ascii: "[")]
        json.reserveCapacity(shown.count * 512 + 2)
        for (index, row) in shown.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            try append(row, &json)
        }
        json.append(UInt8(ascii: "]"))
        return (json, rows.count > limit ? shown.last : nil)
    }

    /// `key` then the column's text as a JSON string (or null), escaped from the raw bytes.
    static func appendText(_ key: String, _ row: PostgresRow, _ column: Int, to out: inout [UInt8]) {
        out += key.utf8
        row.withBytes(at: column) { bytes in
            if let bytes { JSONText.appendQuoted(bytes: bytes, to: &out) } else { out += "null".utf8 }
        }
    }

    static func appendTimestamp(_ key: String, _ row: PostgresRow, _ column: Int, to out: inout [UInt8]) throws {
        out += key.utf8
        out.append(UInt8(ascii: "\""))
        let time: PostgresTimestamp = try row.decode(at: column)
        Timestamp.append(millisecondsSince1970: time.millisecondsSince1970, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// A uuid column as its lowercase text, `8-4-4-4-12` hex digits.
    static func appendUUID(_ key: String, _ row: PostgresRow, _ column: Int, to out: inout [UInt8]) {
        out += key.utf8
        out.append(UInt8(ascii: "\""))
        row.withBytes(at: column) { bytes in
            guard let bytes, bytes.count == 16 else { return }
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xF)])
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
