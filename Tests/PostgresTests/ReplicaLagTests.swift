@testable import Postgres
import Testing

/// The pieces replicas are judged by: log positions as PostgreSQL writes them, and lag in
/// time from the primary's positions (not from the last replayed commit's timestamp, which
/// would make a replica of a quiet database look far behind a moment after a write).
@Suite struct ReplicaLagTests {
    @Test func logPositions_parseAndPrintAsPostgreSQLDoes() {
        #expect(LogSequenceNumber("16/B374D848")?.value == 0x16_B374_D848)
        #expect(LogSequenceNumber("0/0") == .zero)
        #expect(LogSequenceNumber("16/B374D848")?.description == "16/B374D848")
        #expect(LogSequenceNumber("0/1")! < LogSequenceNumber("1/0")!)
        for bad in ["", "/", "1/", "/1", "x/1", "1/2/3", "123456789/0", "-1/0", "1 /0", "+1/0", "１/0"] {
            #expect(LogSequenceNumber(bad) == nil, "\(bad)")
        }
    }

    @Test func lag_isHowLongAgoThePrimaryFirstHeldWhatTheReplicaLacks() {
        let start = ContinuousClock.now
        var history = PrimaryHistory()
        history.record(LogSequenceNumber(value: 100), at: start)
        history.record(LogSequenceNumber(value: 100), at: start + .seconds(1))  // (no write: not a new sample)
        history.record(LogSequenceNumber(value: 200), at: start + .seconds(2))
        history.record(LogSequenceNumber(value: 300), at: start + .seconds(3))
        let now = start + .seconds(4)
        #expect(history.lag(of: LogSequenceNumber(value: 300), now: now) == (.zero, false))
        #expect(history.lag(of: LogSequenceNumber(value: 250), now: now) == (.seconds(1), false))
        #expect(history.lag(of: LogSequenceNumber(value: 100), now: now) == (.seconds(2), false))
        #expect(history.lag(of: LogSequenceNumber(value: 50), now: now) == (.seconds(4), true))
        // A quiet primary: a replica that has all of it is not behind, however long ago that was.
        #expect(history.lag(of: LogSequenceNumber(value: 300), now: start + .seconds(600)) == (.zero, false))
        history.forget(before: start + .seconds(2.5))
        #expect(history.lag(of: LogSequenceNumber(value: 250), now: now) == (.seconds(1), false))
        // Behind the oldest position kept: at least that far behind.
        #expect(history.lag(of: LogSequenceNumber(value: 50), now: now) == (.seconds(2), true))
        #expect(history.lag(of: LogSequenceNumber(value: 200), now: now) == (.seconds(1), false))
        #expect(PrimaryHistory().lag(of: .zero, now: now) == (.zero, true))
    }

    @Test func replicaNames_leaveOutPasswords() {
        #expect(ReplicaSet.Replica.name(of: "postgres://app:secret@db-replica:5433/posts") == "db-replica:5433/posts")
        #expect(ReplicaSet.Replica.name(of: "host=/tmp/pg port=5432 user=postgres password=x dbname=posts") == "/tmp/pg:5432/posts")
    }
}
