import HTTP
import Locking

/// Event streams open at once per client address (`MAX_STREAMS_PER_IP`): a stream holds a
/// connection and a subscriber for as long as the client likes, so one client must not be
/// able to hold them all.
final class StreamQuota: Sendable {
    let perClient: Int
    private let open = ParkingLock<[String: Int]>([:])

    init(perClient: Int) { self.perClient = perClient }

    /// A place for one more stream of this address, or nil when it has its share. The
    /// place is given back when the lease is released or goes away, whichever is first.
    func claim(for address: String) -> Lease? {
        let client = ClientKey.of(address)
        let granted = open.withLock { counts -> Bool in
            guard counts[client, default: 0] < perClient else { return false }
            counts[client, default: 0] += 1
            return true
        }
        return granted ? Lease(quota: self, client: client) : nil
    }


    private func giveBack(_ client: String) {
        open.withLock { counts in
            let left = counts[client, default: 1] - 1
            counts[client] = left > 0 ? left : nil
        }
    }

    /// One open stream's place. Released when the stream closes; if the stream never
    /// started (its client left first), when the last reference to it goes.
    final class Lease: Sendable {
        private let quota: StreamQuota
        private let client: String
        private let released = ParkingLock(false)

        fileprivate init(quota: StreamQuota, client: String) {
            self.quota = quota
            self.client = client
        }

        func release() {
            let first = released.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            if first { quota.giveBack(client) }
        }

        deinit { release() }
    }
}
