/// Per-client token buckets, as a value with an explicit clock: each client may send
/// `perMinute` requests at once and then one every `60 s / perMinute`.
///
/// Each bucket is kept as one instant, the generic cell rate algorithm's "theoretical
/// arrival time": when the client's bucket would be full again. A request is allowed when
/// taking its token leaves that instant at most a full bucket's worth ahead of now. A
/// client whose instant has passed has a full bucket, exactly as one never seen, so such
/// entries can go: the table holds only clients seen within the last minute.
struct TokenBuckets {
    enum Decision: Equatable {
        case allowed
        /// Whole seconds until a token is back (at least 1): the `Retry-After`.
        case refused(retryAfter: Int)
    }

    /// Clients at once, beyond which new ones share one bucket (so a flood of addresses
    /// costs bounded memory and is limited together).
    let maxClients: Int
    private let interval: UInt64
    private let burstWindow: UInt64
    private var fullAt: [String: UInt64] = [:]
    private var sweepAtCount: Int
    private var nextSweep: UInt64 = 0

    static let overflowKey = "*"

    init(perMinute: Int, maxClients: Int) {
        precondition(perMinute > 0)
        interval = 60_000_000_000 / UInt64(perMinute)
        burstWindow = interval * UInt64(perMinute)
        self.maxClients = max(1, maxClients)
        sweepAtCount = min(1024, self.maxClients)
    }

    var clientCount: Int { fullAt.count }

    /// Takes a token from `client`'s bucket at `now` (nanoseconds of a monotonic clock).
    mutating func take(_ client: String, now: UInt64) -> Decision {
        let key = admittedKey(client, now: now)
        let next = max(fullAt[key] ?? now, now) + interval
        if next - now <= burstWindow {
            fullAt[key] = next
            return .allowed
        }
        let wait = next - now - burstWindow
        return .refused(retryAfter: Int(max(1, (wait + 999_999_999) / 1_000_000_000)))
    }

    /// The client's own key, or the shared one when the table is full of live buckets.
    private mutating func admittedKey(_ client: String, now: UInt64) -> String {
        if fullAt[client] != nil { return client }
        // A sweep costs the table's size: it waits until the table has doubled since the
        // last one, and comes at most once a second, so a flood of new clients cannot make
        // every request pay for one.
        if fullAt.count >= sweepAtCount && now >= nextSweep {
            fullAt = fullAt.filter { $0.value > now }
            sweepAtCount = min(maxClients, max(1024, fullAt.count * 2))
            nextSweep = now + 1_000_000_000
        }
        return fullAt.count < maxClients ? client : Self.overflowKey
    }
}
