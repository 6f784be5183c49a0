import Locking

/// Open connections per peer address (`ServerConfiguration.maxConnectionsPerIP`), counted
/// by `ClientKey` (an IPv6 host by its /64): one client must not hold every connection the
/// server will open. Each loop accepts on its own thread, so a claim checks and counts
/// under one lock: two loops accepting the same client at once cannot both take its last
/// place.
final class ConnectionsPerAddress: Sendable {
    enum Claim: Equatable {
        /// The address has its share open: the connection is to be closed at once.
        case refused
        /// Not counted: the limit is off, or the peer is a trusted proxy, whose connections
        /// carry many clients (`maxConnections` still bounds them).
        case uncounted
        /// Counted under this key; `release(_:)` it when the connection closes.
        case counted(key: String)
    }

    let limit: Int
    private let trustedProxies: TrustedProxies
    private let open = ParkingLock<[String: Int]>([:])

    /// `limit` 0 turns the count off.
    init(limit: Int, trustedProxies: TrustedProxies) {
        self.limit = limit
        self.trustedProxies = trustedProxies
    }

    func claim(peer: String) -> Claim {
        guard limit > 0, !trustedProxies.trusts(peer: peer) else { return .uncounted }
        let key = ClientKey.of(peer)
        let granted = open.withLock { counts -> Bool in
            let current = counts[key, default: 0]
            guard current < limit else { return false }
            counts[key] = current + 1
            return true
        }
        return granted ? .counted(key: key) : .refused
    }

    /// Once per counted connection, whichever way it closes.
    func release(_ key: String) {
        open.withLock { counts in
            let left = counts[key, default: 1] - 1
            counts[key] = left > 0 ? left : nil
        }
    }
}
