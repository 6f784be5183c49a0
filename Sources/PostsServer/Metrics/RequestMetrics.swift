#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTP
import Locking

/// Requests counted by method, route pattern and status, and their durations by route in a
/// histogram, for `/metrics`. It sits in front of the access log, which already sees every
/// request once with exactly these facts, and passes each entry on.
final class RequestMetrics: AccessLog {
    /// Upper bounds in seconds, Prometheus' usual spread from a millisecond to ten seconds.
    static let buckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    struct Key: Hashable, Sendable {
        let method: String
        let route: String
        let status: Int
    }

    struct Histogram: Sendable {
        var counts = [Int](repeating: 0, count: RequestMetrics.buckets.count)
        var count = 0
        var sum = 0.0

        mutating func record(_ seconds: Double, bucket: Int?) {
            if let bucket { counts[bucket] += 1 }
            count += 1
            sum += seconds
        }
    }

    struct Snapshot: Sendable {
        var requests: [Key: Int] = [:]
        var durations: [String: Histogram] = [:]
    }

    private let inner: any AccessLog
    /// Shards picked by thread, so that the event loops and workers recording at once do
    /// not queue on one lock (measured: one shared lock cost a tenth of /api/ping's rate).
    private let shards = (0..<16).map { _ in ParkingLock(Snapshot()) }

    init(forwardingTo inner: any AccessLog) {
        self.inner = inner
    }

    func record(_ entry: AccessLogEntry) {
        // Labels from the client would let it grow this table without end: requests that
        // matched no route share one route label, and unknown methods one method label.
        let route = entry.route ?? "unmatched"
        let method = Self.knownMethods.contains(entry.method) ? entry.method : "other"
        let seconds = Double(entry.durationNanoseconds) / 1e9
        let bucket = Self.buckets.firstIndex { seconds <= $0 }
        let shard = shards[Self.threadShard(of: shards.count)]
        shard.withLock { state in
            state.requests[Key(method: method, route: route, status: entry.status), default: 0] += 1
            state.durations[route, default: Histogram()].record(seconds, bucket: bucket)
        }
        inner.record(entry)
    }

    /// The calling thread's shard: pthread_self is its control block's address, mixed so
    /// that threads whose blocks lie a stack apart spread over the shards.
    private static func threadShard(of count: Int) -> Int {
        #if canImport(Glibc)
        let thread = UInt64(pthread_self())
        #else
        let thread = UInt64(UInt(bitPattern: pthread_self()))
        #endif
        return Int(((thread >> 12) &* 0x9E37_79B9_7F4A_7C15) >> 32) % count
    }

    /// All shards added up.
    var snapshot: Snapshot {
        var total = Snapshot()
        for shard in shards {
            let part = shard.withLock { $0 }
            total.requests.merge(part.requests, uniquingKeysWith: +)
            total.durations.merge(part.durations) { a, b in
                Histogram(counts: zip(a.counts, b.counts).map(+), count: a.count + b.count, sum: a.sum + b.sum)
            }
        }
        return total
    }
}
