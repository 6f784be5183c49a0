import Postgres
@testable import PostsServer
import Testing

/// The instance's memory of who wrote lately (read-your-writes for clients that do not send
/// `Read-After`): a user's latest position only, forgotten once no replica taking reads can
/// lack it, and never more users than its capacity.
@Suite struct RecentWritersTests {
    @Test func remembersTheLatestPosition_forAsLongAsAReplicaMayLackIt() {
        let writers = RecentWriters<Int64>(keep: .seconds(10))
        let start = ContinuousClock.now
        writers.remember(1, wroteUpTo: LogSequenceNumber(value: 200), now: start)
        writers.remember(1, wroteUpTo: LogSequenceNumber(value: 100), now: start + .seconds(1))  // (an older one)
        #expect(writers.position(of: 1, now: start + .seconds(2)) == LogSequenceNumber(value: 200))
        #expect(writers.position(of: 2, now: start) == nil)
        // (The older one, made at +1, keeps the entry until +11.)
        #expect(writers.position(of: 1, now: start + .seconds(11)) == LogSequenceNumber(value: 200))
        #expect(writers.position(of: 1, now: start + .seconds(12)) == nil)
        // Written again: kept from then on.
        writers.remember(1, wroteUpTo: LogSequenceNumber(value: 300), now: start + .seconds(8))
        writers.remember(2, wroteUpTo: LogSequenceNumber(value: 300), now: start + .seconds(12))
        #expect(writers.position(of: 1, now: start + .seconds(12)) == LogSequenceNumber(value: 300))
        writers.remember(3, wroteUpTo: LogSequenceNumber(value: 400), now: start + .seconds(30))
        #expect(writers.count == 1)
    }

    /// A higher position (the `primary` of a failed measurement) holds while in force, and
    /// then as long as the next write needs; past its time it does not keep a user's next,
    /// lower, write from being remembered.
    @Test func aHigherPosition_coversTheNextWrite_andPastItsTime_givesWayToIt() {
        let writers = RecentWriters<Int64>(keep: .seconds(10))
        let start = ContinuousClock.now
        writers.remember(1, wroteUpTo: LogSequenceNumber(value: .max), now: start)
        writers.remember(1, wroteUpTo: LogSequenceNumber(value: 500), now: start + .seconds(5))
        #expect(writers.position(of: 1, now: start + .seconds(14)) == LogSequenceNumber(value: .max))
        #expect(writers.position(of: 1, now: start + .seconds(16)) == nil)
        writers.remember(2, wroteUpTo: LogSequenceNumber(value: .max), now: start)
        writers.remember(2, wroteUpTo: LogSequenceNumber(value: 500), now: start + .seconds(11))
        #expect(writers.position(of: 2, now: start + .seconds(12)) == LogSequenceNumber(value: 500))
    }

    @Test func pastItsCapacity_theOldestWritersGoFirst() {
        let writers = RecentWriters<Int64>(keep: .seconds(3600), capacity: 1000)
        let start = ContinuousClock.now
        for user in 1...5000 {
            writers.remember(Int64(user), wroteUpTo: LogSequenceNumber(value: UInt64(user)), now: start + .milliseconds(user))
        }
        #expect(writers.count == 1000)
        #expect(writers.position(of: 5000, now: start + .seconds(6)) == LogSequenceNumber(value: 5000))
        #expect(writers.position(of: 1, now: start + .seconds(6)) == nil)
    }
}
