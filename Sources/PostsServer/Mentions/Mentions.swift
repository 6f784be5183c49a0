import Foundation
import HTTP
import Postgres

/// API.md's mentions: the `@username`s of a post's title, summary and body or of a
/// comment's body that named someone when the text was written, kept by user id.
///
/// Where they are kept, and why: a `mentions json` column of the post's (the comment's)
/// own row, written with the row, NULL when there are none (most rows). Post pages are the
/// hottest reads (`recent50`); with the mentions in the row, a page reads them as it reads
/// `title`, one more column of the rows it already fetches, and shows NULL as `[]`: no
/// join, no per-row lookup, no second query. A `mentions` table would need one of those
/// on every page to answer what is asked far less often than a page is read ("where was I
/// mentioned" belongs to notifications, written when the text is). The row keeps each
/// mention's `user_id` (the identity: a renamed user keeps their mentions) and the username
/// as it was resolved, which is also what the text says between `start` and `end`; showing
/// a renamed user's new name would cost a lookup per row, which is what this avoids.
/// `json` rather than `jsonb`: nothing queries into it, and a read copies the text this
/// server wrote compactly, where `jsonb` would be re-serialized (with spaces) on every read.
struct Mention: Codable, Sendable, Equatable {
    let userID: Int64
    let username: String
    let field: String
    let start: Int
    let end: Int

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case username, field, start, end
    }
}

enum Mentions {
    /// The text fields' mentions: the names of all of them looked up in ONE indexed query
    /// (`lower(username) = ANY($1)`, the unique index on `lower(username)`), none at all
    /// when no text holds a candidate. In field order, then by offset.
    static func resolve(_ fields: [(field: String, text: String)], on connection: PostgresConnection) throws -> [Mention] {
        let parser = MentionParser()
        let found = fields.map { (field: $0.field, candidates: parser.candidates(in: $0.text)) }
        let names = Set(found.flatMap { $0.candidates.flatMap { $0.names.map { $0.lowercased() } } })
            .subtracting(Username.reserved)
        guard !names.isEmpty else { return [] }
        var users: [String: (id: Int64, username: String)] = [:]
        for row in try connection.query("""
            SELECT user_id, username FROM profiles WHERE lower(username) = ANY(\(PostgresArray(names.sorted())))
            """).rows {
            let username: String = try row.decode("username")
            users[username.lowercased()] = (try row.decode("user_id"), username)
        }
        var mentions: [Mention] = []
        for (field, candidates) in found {
            for candidate in candidates {
                guard let name = candidate.names.first(where: { users[$0.lowercased()] != nil }),
                      let user = users[name.lowercased()] else { continue }
                mentions.append(Mention(userID: user.id, username: user.username, field: field,
                                        start: candidate.start, end: candidate.end(for: name)))
            }
        }
        return mentions
    }

    /// The value of a `mentions` column: NULL for none.
    static func column(_ mentions: [Mention]) -> String? {
        guard !mentions.isEmpty else { return nil }
        var out: [UInt8] = []
        appendArray(mentions, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// A `mentions` column's value read back (a post's, before an edit).
    static func decode(_ json: String?) -> [Mention] {
        guard let json else { return [] }
        return (try? JSONDecoder().decode([Mention].self, from: Data(json.utf8))) ?? []
    }

    static func appendArray(_ mentions: [Mention], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (index, mention) in mentions.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += #"{"user_id":"#.utf8
            RowJSON.appendInteger(mention.userID, to: &out)
            out += #","username":"#.utf8
            JSONText.appendQuoted(mention.username, to: &out)
            out += #","field":"#.utf8
            JSONText.appendQuoted(mention.field, to: &out)
            out += #","start":"#.utf8
            RowJSON.appendInteger(Int64(mention.start), to: &out)
            out += #","end":"#.utf8
            RowJSON.appendInteger(Int64(mention.end), to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
    }
}
