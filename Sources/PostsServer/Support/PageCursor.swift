import Foundation
import HTTP
import Postgres

/// A keyset cursor: where the next page starts, as the sort key of the last item shown.
/// Opaque to clients (base64url bytes), so its form may change; anything this server did
/// not hand out is 400.
protocol PageCursor: Sendable {
    init(_ text: String) throws(APIError)
    var text: String { get }
}

/// (created_at, bigint id): posts newest first, likes newest first.
struct KeysetCursor: PageCursor, Equatable {
    let createdAt: PostgresTimestamp
    let id: Int64

    init(createdAt: PostgresTimestamp, id: Int64) {
        self.createdAt = createdAt
        self.id = id
    }

    init(_ text: String) throws(APIError) {
        guard let (microseconds, id) = Base64URL.decodePair(text), id > 0,
              PostgresTimestamp.finiteRange.contains(microseconds) else { throw .malformed("malformed cursor") }
        createdAt = PostgresTimestamp(microsecondsSince2000: microseconds)
        self.id = id
    }

    var text: String { Base64URL.encode(createdAt.microsecondsSince2000, id) }

    /// `AND (created, id) < (…)`: the rest of a newest-first page, in the order of the
    /// (…, created_at DESC, id DESC) indexes, so the index scan starts right there.
    func before(created: String, id idColumn: String) -> SQLQuery {
        " AND (\(unsafeSQL: created), \(unsafeSQL: idColumn)) < (\(createdAt), \(id))"
    }
}

/// (created_at, uuid id): comments oldest first.
struct CommentCursor: PageCursor, Equatable {
    let createdAt: PostgresTimestamp
    let id: UUID

    init(createdAt: PostgresTimestamp, id: UUID) {
        self.createdAt = createdAt
        self.id = id
    }

    init(_ text: String) throws(APIError) {
        guard let bytes = Base64URL.decode(text), bytes.count == 24,
              case let microseconds = Int64(bigEndianBytes: bytes[0..<8]), PostgresTimestamp.finiteRange.contains(microseconds)
        else { throw .malformed("malformed cursor") }
        createdAt = PostgresTimestamp(microsecondsSince2000: microseconds)
        let uuidBytes = Array(bytes[8..<24])
        id = UUID(uuid: (uuidBytes[0], uuidBytes[1], uuidBytes[2], uuidBytes[3], uuidBytes[4], uuidBytes[5], uuidBytes[6],
                         uuidBytes[7], uuidBytes[8], uuidBytes[9], uuidBytes[10], uuidBytes[11], uuidBytes[12],
                         uuidBytes[13], uuidBytes[14], uuidBytes[15]))
    }

    var text: String {
        Base64URL.encode(createdAt.microsecondsSince2000.bigEndianByteArray + withUnsafeBytes(of: id.uuid, Array.init))
    }

    /// `AND (c.created_at, c.id) > (…)`: the rest of an oldest-first page.
    var after: SQLQuery { " AND (c.created_at, c.id) > (\(createdAt), \(id))" }
}

/// `limit` and `cursor` of a page request (API.md: limit 1..100, default 50; else 400).
struct PageRequest<Cursor: PageCursor>: Sendable {
    let limit: Int
    let cursor: Cursor?

    init(_ query: QueryParameters, maxLimit: Int = 100, defaultLimit: Int = 50) throws(APIError) {
        if let text = query["limit"] {
            guard let value = Int(text), (1...maxLimit).contains(value) else {
                throw .malformed("limit must be a whole number from 1 to \(maxLimit)")
            }
            limit = value
        } else {
            limit = defaultLimit
        }
        cursor = try query["cursor"].map { text throws(APIError) in try Cursor(text) }
    }
}

extension Int64 {
    init(bigEndianBytes bytes: ArraySlice<UInt8>) {
        self = bytes.reduce(0) { $0 << 8 | Int64($1) }
    }

    var bigEndianByteArray: [UInt8] { withUnsafeBytes(of: bigEndian, Array.init) }
}
