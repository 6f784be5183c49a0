import Testing
@testable import HTTP

/// The clock rules without a clock: readings in nanoseconds.
@Suite struct ConnectionTimeoutsTests {
    private static let second: UInt64 = 1_000_000_000
    private let timeouts = ConnectionTimeouts(ServerConfiguration())

    @Test func headDeadline_ofANewConnection_runsFromWhenItOpened() {
        // A first byte sent just before the deadline buys no more time.
        #expect(timeouts.headDeadline(connectionOpenedAt: 5 * Self.second, firstByte: 14 * Self.second)
            == 15 * Self.second)
    }

    @Test func headDeadline_ofAKeptAliveConnection_runsFromTheHeadsFirstByte() {
        #expect(timeouts.headDeadline(connectionOpenedAt: nil, firstByte: 40 * Self.second) == 50 * Self.second)
    }

    @Test func body_isNeverTooSlowWithinTheGracePeriod() {
        #expect(!timeouts.isBodyTooSlow(start: 0, received: 0, now: 10 * Self.second))
    }

    @Test func body_mustAverageTheMinimumRateAfterTheGracePeriod() {
        // 20 bytes a second, the trickle that used to hold a connection forever.
        #expect(timeouts.isBodyTooSlow(start: 0, received: 20 * 11, now: 11 * Self.second))
        #expect(!timeouts.isBodyTooSlow(start: 0, received: 1024, now: 11 * Self.second))
        #expect(timeouts.isBodyTooSlow(start: 0, received: 1023, now: 11 * Self.second))
        // A stalled body is cut soon after the grace period.
        #expect(timeouts.isBodyTooSlow(start: 0, received: 0, now: 10 * Self.second + 2_000_000))
    }
}
