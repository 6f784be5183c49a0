import Dispatch
import HTTP
import Locking

/// `RATE_LIMIT_IP`: token buckets per client address, shared by every route that is
/// limited and by every thread. The table is split in shards under locks of their own, so
/// that workers limiting different clients seldom wait for each other.
final class RateLimiter: Sendable {
    let perMinute: Int
    private let shards: [ParkingLock<TokenBuckets>]

    /// `maxClients`: addresses tracked at once, all shards together (about 100 bytes each);
    /// each shard holds its part, and past it a shard's newcomers share its overflow bucket.
    init(perMinute: Int, maxClients: Int = 65_536) {
        self.perMinute = perMinute
        let shardCount = 16
        shards = (0..<shardCount).map { _ in
            ParkingLock(TokenBuckets(perMinute: perMinute, maxClients: max(1, maxClients / shardCount)))
        }
    }

    func take(for address: String) -> TokenBuckets.Decision {
        let client = ClientKey.of(address)
        let shard = shards[Int(UInt(bitPattern: client.hashValue) % UInt(shards.count))]
        let now = DispatchTime.now().uptimeNanoseconds
        return shard.withLock { $0.take(client, now: now) }
    }
}
