import Foundation
import Postgres

/// Our posts and comments as ActivityPub `Note`s (API.md "Actors"): HTML of the text,
/// the image as an `attachment`, hashtags and mentions as `tag`, `to` Public and `cc` the
/// author's followers; a child post and a comment name what they answer in `inReplyTo`.
/// A deleted one is a `Tombstone`; another server's is none of ours to serve.
struct NoteDocuments: Sendable {
    let pool: ConnectionPool
    let urls: FederationURLs

    enum Found {
        case note([String: Any])
        case tombstone([String: Any])
    }

    func post(_ id: Int64) throws -> Found? {
        try pool.withReadConnection { try post(id, on: $0) }
    }

    func comment(_ id: UUID) throws -> Found? {
        try pool.withReadConnection { try comment(id, on: $0) }
    }

    func post(_ id: Int64, on connection: PostgresConnection) throws -> Found? {
        let row = try connection.query("""
                SELECT p.id, p.user_id, p.title, p.summary, p.body, p.image_url, p.image_width, p.image_height, p.created_at,
                       p.deleted, p.tags::text AS tags, \(Self.mentions("p.mentions")) AS mentions,
                       parent.id AS parent_id, (SELECT uri FROM remote_objects WHERE post_id = parent.id) AS parent_uri
                FROM posts p LEFT JOIN posts parent ON parent.id = p.parent_id
                WHERE p.id = \(id) AND NOT EXISTS (SELECT 1 FROM remote_objects o WHERE o.post_id = p.id)
                  \(Visibility.actable(author: "p.user_id"))
                """).first
        let uri = urls.post(id)
        guard let row else { return try tombstone(uri, "post:\(id)", on: connection) }
        if try row.decode("deleted", as: Bool.self) {
            return .tombstone(["id": uri, "type": "Tombstone", "formerType": "Note"])
        }
        let author: Int64 = try row.decode("user_id")
        var note = Self.base(id: uri, author: urls.actor(author), followers: urls.followers(author),
                             published: try row.decode("created_at", as: Date.self))
        note["content"] = NoteContent.html(paragraphs: [try row.decode("title"), try row.decode("summary"), try row.decode("body")])
        if let parent = try row.decode("parent_id", as: Int64?.self) {
            note["inReplyTo"] = try row.decode("parent_uri", as: String?.self) ?? urls.post(parent)
        }
        if let image = try row.decode("image_url", as: String?.self) {
            let absolute = image.hasPrefix("/") ? urls.origin + image : image
            var document: [String: Any] = ["type": "Document", "mediaType": NoteContent.mediaType(ofImage: absolute), "url": absolute]
            if let width = try row.decode("image_width", as: Int?.self) { document["width"] = width }
            if let height = try row.decode("image_height", as: Int?.self) { document["height"] = height }
            note["attachment"] = [document]
        }
        note["tag"] = try tags(row)
        return .note(note)
    }

    func comment(_ id: UUID, on connection: PostgresConnection) throws -> Found? {
        let row = try connection.query("""
                SELECT c.id, c.user_id, c.body, c.created_at, c.tags::text AS tags, \(Self.mentions("c.mentions")) AS mentions,
                       c.post_id, (SELECT uri FROM remote_objects WHERE post_id = c.post_id) AS post_uri,
                       c.reply_to, (SELECT uri FROM remote_objects WHERE comment_id = c.reply_to) AS reply_to_uri
                FROM comments c
                WHERE c.id = \(id) AND NOT EXISTS (SELECT 1 FROM remote_objects o WHERE o.comment_id = c.id)
                  \(Visibility.actable(author: "c.user_id"))
                """).first
        guard let row else { return try tombstone(urls.comment(id), "comment:\(id.uuidString.lowercased())", on: connection) }
        let author: Int64 = try row.decode("user_id")
        var note = Self.base(id: urls.comment(id), author: urls.actor(author), followers: urls.followers(author),
                             published: try row.decode("created_at", as: Date.self))
        note["content"] = NoteContent.html(paragraphs: [try row.decode("body")])
        if let replyTo = try row.decode("reply_to", as: UUID?.self) {
            note["inReplyTo"] = try row.decode("reply_to_uri", as: String?.self) ?? urls.comment(replyTo)
        } else {
            note["inReplyTo"] = try row.decode("post_uri", as: String?.self) ?? urls.post(try row.decode("post_id"))
        }
        note["tag"] = try tags(row)
        return .note(note)
    }

    /// A deleted object of ours that no row holds any more (`FederationEffects`).
    private func tombstone(_ uri: String, _ key: String, on connection: PostgresConnection) throws -> Found? {
        let rows = try connection.query("SELECT 1 FROM federation_tombstones WHERE object_id = \(key)").rowCount
        return rows > 0 ? .tombstone(["id": uri, "type": "Tombstone", "formerType": "Note"]) : nil
    }

    private static func base(id: String, author: String, followers: String, published: Date) -> [String: Any] {
        ["id": id, "type": "Note", "attributedTo": author, "url": id, "to": [ActivityPub.publicCollection],
         "cc": [followers], "published": Timestamp.format(published), "sensitive": false]
    }

    /// The mentioned users' actor ids and accts, as JSON text: `[{"uri","acct","user_id"}]`.
    private static func mentions(_ column: String) -> SQLQuery {
        """
        (SELECT json_agg(json_build_object('user_id', pr.user_id, 'uri', ra.uri, 'acct', coalesce(pr.acct, pr.username)))::text
         FROM json_array_elements(\(unsafeSQL: column)) m JOIN profiles pr ON pr.user_id = (m->>'user_id')::bigint
         LEFT JOIN remote_actors ra ON ra.user_id = pr.user_id)
        """
    }

    private func tags(_ row: PostgresRow) throws -> [[String: Any]] {
        var tags: [[String: Any]] = []
        var seen: Set<String> = []
        for tag in Self.array(try row.decode("tags", as: String?.self)) {
            guard let name = tag["name"] as? String, seen.insert(name.lowercased()).inserted else { continue }
            tags.append(["type": "Hashtag", "href": urls.tag(name), "name": "#\(name)"])
        }
        for mention in Self.array(try row.decode("mentions", as: String?.self)) {
            guard let user = (mention["user_id"] as? NSNumber)?.int64Value, let acct = mention["acct"] as? String else { continue }
            let href = mention["uri"] as? String ?? urls.actor(user)
            let name = acct.contains("@") ? "@\(acct)" : "@\(acct)@\(urls.domain)"
            tags.append(["type": "Mention", "href": href, "name": name])
        }
        return tags
    }

    private static func array(_ text: String?) -> [[String: Any]] {
        guard let data = text?.data(using: .utf8) else { return [] }
        return (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]] ?? []
    }
}
