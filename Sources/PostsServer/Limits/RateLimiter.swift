import HTTP
import Locking

/// `RATE_LIMIT_IP`: token buckets per client address, shared by every route that is
/// limited and by every thread. The table is split in shards under locks of their own, so
/// that workers limiting different clients seldom wait for each other.
///
/// Its minutes are the `ServerClock`'s (API.md "The clock": rate-limit windows follow it).
final class RateLimiter: Sendable {
    let perMinute: Int
    private let clock: ServerClock
    private let shards: [ParkingLock<TokenBuckets>]

    /// `maxClients`: addresses tracked at once, all shards together (about 100 bytes each);
    /// each shard holds its part, and past it a shard's newcomers share its overflow bucket.
    init(perMinute: Int, maxClients: Int = 65_536, clock: ServerClock) {
        self.perMinute = perMinute
        self.clock = clock
        let shardCount = 16
        shards = (0..<shardCount).map { _ in
            ParkingLock(TokenBuckets(perMinute: perMinute, maxClients: max(1, maxClients / shardCount)))
        }
    }

    func take(for address: String) -> TokenBuckets.Decision {
        let client = ClientKey.of(address)
        let shard = shards[Int(UInt(bitPattern: client.hashValue) % UInt(shards.count))]
        let now = clock.uptimeNanoseconds
        return shard.withLock { $0.take(client, now: now) }
    }
}
