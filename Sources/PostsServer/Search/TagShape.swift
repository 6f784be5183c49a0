import HTTP
import Postgres

/// API.md's tag as lists show it: `{"name","posts_count"}`, and `"authors_24h"` in the
/// trending list. Rows name the columns `name`, `posts_count` (and `authors_24h`).
enum TagShape {
    static func append(_ row: PostgresRow, to out: inout [UInt8]) throws {
        out += #"{"name":"#.utf8
        JSONText.appendQuoted(try row.decode("name", as: String.self), to: &out)
        out += #","posts_count":"#.utf8
        RowJSON.appendInteger(Int64(try row.decode("posts_count", as: Int32.self)), to: &out)
        out.append(UInt8(ascii: "}"))
    }

    static func append(_ tag: TrendingTag, to out: inout [UInt8]) {
        out += #"{"name":"#.utf8
        JSONText.appendQuoted(tag.name, to: &out)
        out += #","posts_count":"#.utf8
        RowJSON.appendInteger(tag.postsCount, to: &out)
        out += #","authors_24h":"#.utf8
        RowJSON.appendInteger(tag.authors24h, to: &out)
        out.append(UInt8(ascii: "}"))
    }
}

struct TrendingTag: Sendable, Equatable {
    let name: String
    let postsCount: Int64
    let authors24h: Int64
}
