import Foundation
import Postgres

/// An actor's `outbox`, `followers` and `following` (API.md "Actors"): each an
/// `OrderedCollection` with its total and a first page, pages of 40 newest first, walked
/// by the same keyset cursors as the API's lists (`?page=true`, then `?cursor=`).
struct ActorCollections: Sendable {
    let pool: ConnectionPool
    let urls: FederationURLs
    static let pageSize = 40

    enum Kind: String, CaseIterable, Sendable {
        case outbox, followers, following
    }

    /// The collection, or its page when `page` (nil: no such actor of ours).
    func collection(_ kind: Kind, of user: Int64, page: Bool, cursor: KeysetCursor?) throws -> [String: Any]? {
        let id = "\(urls.actor(user))/\(kind.rawValue)"
        return try pool.withReadConnection { connection -> [String: Any]? in
            let owner = try connection.query("""
                SELECT followers_count, following_count, posts_count FROM profiles
                WHERE user_id = \(user) AND acct IS NULL AND NOT suspended
                """).first
            guard let owner else { return nil }
            let total: Int = switch kind {
            case .outbox: try owner.decode("posts_count")
            case .followers: try owner.decode("followers_count")
            case .following: try owner.decode("following_count")
            }
            guard page else {
                return ["id": id, "type": "OrderedCollection", "totalItems": total, "first": "\(id)?page=true"]
            }
            let rows = try connection.query(query(kind, of: user, cursor: cursor)).rows
            var items: [Any] = []
            for row in rows.prefix(Self.pageSize) {
                let other: Int64 = try row.decode("id")
                switch kind {
                case .outbox:
                    let note = urls.post(other)
                    items.append(["id": "\(note)/activity", "type": "Create", "actor": urls.actor(user),
                                  "published": Timestamp.format(try row.decode("created_at", as: Date.self)),
                                  "to": [ActivityPub.publicCollection], "cc": [urls.followers(user)], "object": note])
                case .followers, .following:
                    items.append(try row.decode("uri", as: String?.self) ?? urls.actor(other))
                }
            }
            var document: [String: Any] = ["id": "\(id)?page=true" + (cursor.map { "&cursor=\($0.text)" } ?? ""),
                                           "type": "OrderedCollectionPage", "partOf": id, "totalItems": total,
                                           "orderedItems": items]
            if rows.count > Self.pageSize, let last = rows.prefix(Self.pageSize).last {
                let next = KeysetCursor(createdAt: try last.decode("created_at"), id: try last.decode("id"))
                document["next"] = "\(id)?page=true&cursor=\(next.text)"
            }
            return document
        }
    }

    private func query(_ kind: Kind, of user: Int64, cursor: KeysetCursor?) -> SQLQuery {
        let limit = Self.pageSize + 1
        switch kind {
        case .outbox:
            var query: SQLQuery = "SELECT p.id, p.created_at FROM posts p WHERE p.user_id = \(user) AND NOT p.deleted"
            if let cursor { query.append(cursor.before(created: "p.created_at", id: "p.id")) }
            query.append(" ORDER BY p.created_at DESC, p.id DESC LIMIT \(literal: limit)")
            return query
        case .followers:
            return follows(listing: "follower_id", of: "followee_id", user, cursor: cursor, limit: limit)
        case .following:
            return follows(listing: "followee_id", of: "follower_id", user, cursor: cursor, limit: limit)
        }
    }

    /// The follows whose `owner` column is the user, newest first: the other side's id and,
    /// for a remote account, its actor's id.
    private func follows(listing listed: String, of owner: String, _ user: Int64, cursor: KeysetCursor?, limit: Int) -> SQLQuery {
        var query: SQLQuery = """
            SELECT f.\(unsafeSQL: listed) AS id, f.created_at, ra.uri FROM follows f LEFT JOIN remote_actors ra ON ra.user_id = f.\(unsafeSQL: listed)
            WHERE f.\(unsafeSQL: owner) = \(user)
            """
        if let cursor { query.append(cursor.before(created: "f.created_at", id: "f.\(listed)")) }
        query.append(" ORDER BY f.created_at DESC, f.\(unsafeSQL: listed) DESC LIMIT \(literal: limit)")
        return query
    }
}
