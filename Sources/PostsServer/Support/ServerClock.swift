import Foundation
import Locking
import Postgres
import Synchronization

/// The server's "now" for every time the contract gives (API.md "The clock"): stamps the
/// server writes, codes' and tokens' expiry, rate-limit and idempotency windows, trending's
/// day, retention and pruning, jobs' due times. The database's clock, moved by an offset
/// that is zero in production; SQL never reads `now()` itself (`OneClockTests`). Times are
/// compared in SQL against `now`, so instances agree whatever their own clocks say; a test
/// that waits for a timer advances this clock (`advance(by:)`) instead of sleeping through
/// it, and whatever waits on the clock is woken to look again. An in-process cache's age and
/// an HTTP timeout are the machine's own time, not this.
public final class ServerClock: Sendable {
    private let offsetMilliseconds = Atomic<Int64>(0)
    private let observers = ParkingLock<[@Sendable () -> Void]>([])

    public init() {}

    /// Moves the clock on: jobs due within `duration` are due now, and are looked at at once.
    public func advance(by duration: Duration) {
        offsetMilliseconds.add(duration.milliseconds, ordering: .relaxed)
        for observer in observers.withLock({ $0 }) { observer() }
    }

    /// `observer` runs (on the advancing thread) each time the clock is advanced.
    func onAdvance(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// This machine's now, moved by the same offset, in whole seconds since 1970: for what is
    /// judged without the database (an ID token's `exp` and `iat`).
    var secondsSince1970: Int64 {
        millisecondsSince1970 / 1000
    }

    /// The same, in milliseconds: a change's age as the server measures it.
    var millisecondsSince1970: Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) + offsetMilliseconds.load(ordering: .relaxed)
    }

    /// The machine's monotonic time moved by the offset, in nanoseconds (never below zero):
    /// for windows counted in memory (the per-address rate limit), which an advance of the
    /// clock moves on as it moves the database's.
    var uptimeNanoseconds: UInt64 {
        // In floating point: an offset of centuries (a clock set far ahead) must not trap.
        let shifted = Double(DispatchTime.now().uptimeNanoseconds) + Double(offsetMilliseconds.load(ordering: .relaxed)) * 1e6
        return UInt64(min(max(shifted, 0), 1.8e19))
    }

    /// The clock's now in SQL: the statement's `now()` plus the offset, bound as a value so
    /// that the statement's text, and its prepared plan, stay the same.
    var now: SQLQuery {
        "(now() + make_interval(secs => \(Double(offsetMilliseconds.load(ordering: .relaxed)) / 1000)))"
    }
}

extension Duration {
    /// Whole milliseconds (rounded down).
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
