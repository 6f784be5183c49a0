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

    init(_ text: String) throws(APIError) {
        guard let (txid, position) = Base64URL.decodePair(text), txid >= 0 else { throw .malformed("malformed since") }
        self.txid = txid
        self.position = position
    }

    var text: String { Base64URL.encode(txid, position) }

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
