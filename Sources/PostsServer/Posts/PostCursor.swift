import HTTP
import Postgres

/// A keyset cursor: the (created_at, id) of the last post of a page, which the next page
/// starts below. Opaque to clients (base64url of 16 bytes), so its form may change.
struct PostCursor: Sendable, Equatable {
    let createdAt: PostgresTimestamp
    let id: Int64

    init(createdAt: PostgresTimestamp, id: Int64) {
        self.createdAt = createdAt
        self.id = id
    }

    /// 400 for anything this server did not hand out.
    init(_ text: String) throws(HTTPError) {
        guard let bytes = Base64URL.decode(text), bytes.count == 16 else { throw .badRequest("malformed cursor") }
        func integer(_ range: Range<Int>) -> Int64 {
            bytes[range].reduce(0) { $0 << 8 | Int64($1) }
        }
        createdAt = PostgresTimestamp(microsecondsSince2000: integer(0..<8))
        id = integer(8..<16)
        guard id > 0 else { throw .badRequest("malformed cursor") }
    }

    var text: String {
        Base64URL.encode(withUnsafeBytes(of: createdAt.microsecondsSince2000.bigEndian, Array.init)
                         + withUnsafeBytes(of: id.bigEndian, Array.init))
    }

    /// `AND (p.created_at, p.id) < (…)`: where the next page starts, in the order of the
    /// (created_at DESC, id DESC) indexes, so the index scan starts there too.
    var condition: SQLQuery {
        " AND (p.created_at, p.id) < (\(createdAt), \(id))"
    }
}

/// `limit` and `cursor` of a page request (API.md: limit 1..100, default 50; else 400).
struct PageRequest: Sendable {
    let limit: Int
    let cursor: PostCursor?

    init(_ query: QueryParameters, maxLimit: Int = 100, defaultLimit: Int = 50) throws(HTTPError) {
        if let text = query["limit"] {
            guard let value = Int(text), (1...maxLimit).contains(value) else {
                throw .badRequest("limit must be a whole number from 1 to \(maxLimit)")
            }
            limit = value
        } else {
            limit = defaultLimit
        }
        cursor = try query["cursor"].map { text throws(HTTPError) in try PostCursor(text) }
    }
}
