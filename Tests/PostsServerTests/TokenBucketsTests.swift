import Testing
@testable import PostsServer

/// The per-address buckets without a clock: readings in nanoseconds.
@Suite struct TokenBucketsTests {
    private static let second: UInt64 = 1_000_000_000

    @Test func aFullMinutesWorth_isAllowedAtOnce_thenOneEveryInterval() {
        var buckets = TokenBuckets(perMinute: 60, maxClients: 10)
        let start = 100 * Self.second
        for _ in 0..<60 { #expect(buckets.take("a", now: start) == .allowed) }
        #expect(buckets.take("a", now: start) == .refused(retryAfter: 1))
        #expect(buckets.take("a", now: start + Self.second / 2) == .refused(retryAfter: 1))
        #expect(buckets.take("a", now: start + Self.second) == .allowed)
        #expect(buckets.take("a", now: start + Self.second) == .refused(retryAfter: 1))
    }

    @Test func retryAfter_roundsTheWaitUp() {
        var buckets = TokenBuckets(perMinute: 2, maxClients: 10)
        #expect(buckets.take("a", now: 0) == .allowed)
        #expect(buckets.take("a", now: 0) == .allowed)
        #expect(buckets.take("a", now: 0) == .refused(retryAfter: 30))
        #expect(buckets.take("a", now: 29 * Self.second + 1) == .refused(retryAfter: 1))
        #expect(buckets.take("a", now: 30 * Self.second) == .allowed)
    }

    @Test func clients_haveBucketsOfTheirOwn() {
        var buckets = TokenBuckets(perMinute: 1, maxClients: 10)
        #expect(buckets.take("a", now: 0) == .allowed)
        #expect(buckets.take("a", now: 0) != .allowed)
        #expect(buckets.take("b", now: 0) == .allowed)
    }

    @Test func refusals_takeNoToken() {
        var buckets = TokenBuckets(perMinute: 1, maxClients: 10)
        #expect(buckets.take("a", now: 0) == .allowed)
        for _ in 0..<100 { #expect(buckets.take("a", now: 0) != .allowed) }
        #expect(buckets.take("a", now: 60 * Self.second) == .allowed)
    }

    /// Clients with full buckets go when the table is swept: it holds only the last
    /// minute's clients, however many came before.
    @Test func clientsWithFullBuckets_areForgotten() {
        var buckets = TokenBuckets(perMinute: 60, maxClients: 100_000)
        for client in 0..<1024 { _ = buckets.take("old-\(client)", now: 0) }
        #expect(buckets.clientCount == 1024)
        _ = buckets.take("new", now: 2 * Self.second)
        #expect(buckets.clientCount == 1)
    }

    /// Past `maxClients` live buckets, newcomers share one: memory stays bounded and a
    /// flood of addresses is limited as one client.
    @Test func newcomersPastTheCap_shareOneBucket() {
        var buckets = TokenBuckets(perMinute: 2, maxClients: 3)
        for client in ["a", "b", "c"] { #expect(buckets.take(client, now: 0) == .allowed) }
        #expect(buckets.take("d", now: 0) == .allowed)
        #expect(buckets.take("e", now: 0) == .allowed)
        #expect(buckets.take("f", now: 0) == .refused(retryAfter: 30))
        #expect(buckets.clientCount == 4)
        // Known clients keep their own buckets.
        #expect(buckets.take("a", now: 0) == .allowed)
    }
}
