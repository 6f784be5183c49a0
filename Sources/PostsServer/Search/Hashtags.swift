import Foundation
import HTTP
import Postgres

/// API.md's tag of a post or comment: its folded name and where its `#` stands.
struct Hashtag: Codable, Sendable, Equatable {
    let name: String
    let field: String
    let start: Int
    let end: Int
}

/// A write's hashtags: found by `HashtagParser`, their names folded by the database's
/// `search_fold` (the function search folds with, so a tag and a search for its word agree),
/// kept in the row's `tags` column for reads (as `mentions` is: no join on a page) and in
/// `post_tags` / `comment_tags` by tag id for tag pages, counts and trending.
enum Hashtags {
    /// The text fields' tags, in field order, then by offset. No round trip when no text
    /// holds a `#` candidate (most posts); else one, to fold the names.
    static func resolve(_ fields: [(field: String, text: String)], on connection: PostgresConnection) throws -> [Hashtag] {
        try resolve(many: [fields], on: connection)[0]
    }

    /// The tags of several rows' text fields (the demo seed's), with one round trip for all.
    static func resolve(many rows: [[(field: String, text: String)]], on connection: PostgresConnection) throws -> [[Hashtag]] {
        let parser = HashtagParser()
        let found = rows.map { fields in
            fields.flatMap { field in parser.tags(in: field.text).map { (field: field.field, tag: $0) } }
        }
        let written = Array(Set(found.flatMap { $0.map(\.tag.name) })).sorted()
        guard !written.isEmpty else { return rows.map { _ in [] } }
        var folded: [String: String] = [:]
        for row in try connection.query("""
            SELECT n AS written, search_fold(n) AS name FROM unnest(\(PostgresArray(written))::text[]) n
            """).rows {
            folded[try row.decode("written")] = try row.decode("name")
        }
        // A name of marks alone folds to nothing: no tag.
        return found.map { tags in
            tags.compactMap { found in
                guard let name = folded[found.tag.name], !name.isEmpty else { return nil }
                return Hashtag(name: name, field: found.field, start: found.tag.start, end: found.tag.end)
            }
        }
    }

    /// The distinct names, sorted: what `tag_ids` is given.
    static func names(_ tags: [Hashtag]) -> [String] {
        Array(Set(tags.map(\.name))).sorted()
    }

    /// The value of a `tags` column: NULL for none.
    static func column(_ tags: [Hashtag]) -> String? {
        guard !tags.isEmpty else { return nil }
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (index, tag) in tags.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += #"{"name":"#.utf8
            JSONText.appendQuoted(tag.name, to: &out)
            out += #","field":"#.utf8
            JSONText.appendQuoted(tag.field, to: &out)
            out += #","start":"#.utf8
            RowJSON.appendInteger(Int64(tag.start), to: &out)
            out += #","end":"#.utf8
            RowJSON.appendInteger(Int64(tag.end), to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        return String(decoding: out, as: UTF8.self)
    }

    /// A `tags` column's value read back (a post's, before an edit).
    static func decode(_ json: String?) -> [Hashtag] {
        guard let json else { return [] }
        return (try? JSONDecoder().decode([Hashtag].self, from: Data(json.utf8))) ?? []
    }

    /// An edit's tags: the edited fields parsed again, the others' kept; nil (no change)
    /// when no text field is edited.
    static func after(_ edited: [(field: String, text: String)], keeping old: String?,
                      on connection: PostgresConnection) throws -> [Hashtag]? {
        guard !edited.isEmpty else { return nil }
        return TextSpans.merge(kept: decode(old), parsed: try resolve(edited, on: connection),
                               editedFields: Set(edited.map(\.field)))
    }

    /// `named_tags`, `post_tagged` (…): the post of the CTE `p` (one row) carries these names' tags
    /// and no others. For a new post only the insert; for an edit the tags it no longer
    /// names are taken off too. (`post_tags`' trigger keeps `tags.posts_count`.) A new tag is
    /// stamped `now` (the clock's, in SQL).
    static func postTagging(_ names: [String], edit: Bool, at now: SQLQuery) -> [SQLQuery] {
        var ctes: [SQLQuery] = [
            "named_tags AS (SELECT * FROM tag_ids(\(PostgresArray(names))::text[], \(now)))",
            """
            post_tagged AS (
                INSERT INTO post_tags (tag_id, post_id, author_id, created_at)
                SELECT t.tag_id, p.id, p.user_id, p.created_at FROM p, named_tags t
                ON CONFLICT DO NOTHING
            )
            """,
        ]
        if edit {
            ctes.append("""
                post_untagged AS (
                    DELETE FROM post_tags pt USING p
                    WHERE pt.post_id = p.id AND pt.tag_id NOT IN (SELECT tag_id FROM named_tags)
                )
                """)
        }
        return ctes
    }
}
