import HTTP
import Postgres

/// Where a change stands in the feed: (txid, position), see `ChangeLog`. Clients see it as
/// an opaque `seq` (base64url of 16 bytes); a malformed one is 400.
struct ChangeKey: Sendable, Comparable, Hashable {
    let txid: Int64
    let position: Int64

    init(txid: Int64, position: Int64) {
        self.txid = txid
        self.position = position
    }

    init(_ text: String) throws(HTTPError) {
        guard let bytes = Base64URL.decode(text), bytes.count == 16 else { throw .badRequest("malformed since") }
        txid = Int64(bigEndianBytes: bytes[0..<8])
        position = Int64(bigEndianBytes: bytes[8..<16])
        guard txid >= 0 else { throw .badRequest("malformed since") }
    }

    var text: String { Base64URL.encode(txid.bigEndianByteArray + position.bigEndianByteArray) }

    /// The position just below a horizon: everything under it seen, everything at or above
    /// it still to come.
    static func below(horizon: Int64) -> ChangeKey { ChangeKey(txid: horizon - 1, position: .max) }

    static func < (a: ChangeKey, b: ChangeKey) -> Bool {
        (a.txid, a.position) < (b.txid, b.position)
    }

    /// `(txid, position) > (…)` in SQL, xid8 compared as such.
    var after: SQLQuery {
        " AND (c.txid, c.position) > (\(String(txid))::xid8, \(position))"
    }
}
