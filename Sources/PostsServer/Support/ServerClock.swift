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
///
/// Two parts: the setting every instance on the database shares (`/api/dev/clock`, trust
/// mode only: an offset, or a moment time stands still at; `DevClock` keeps it and applies
/// it here), and this process's own advances (`advance(by:)`, what the server's own tests
/// use), added on top, so that neither overwrites the other.
public final class ServerClock: Sendable {
    /// The shared setting as this instance last learnt it.
    public struct Setting: Sendable, Equatable {
        /// Added to real time while the clock runs.
        public var offsetMilliseconds: Int64 = 0
        /// Where time stands still (ms since 1970), nil while it runs.
        public var frozenAt: Int64?

        public init(offsetMilliseconds: Int64 = 0, frozenAt: Int64? = nil) {
            self.offsetMilliseconds = offsetMilliseconds
            self.frozenAt = frozenAt
        }

        public static let real = Setting()
    }

    private struct State {
        var shared = Setting.real
        /// The read `shared` came from (`DevState.ticket()`): an older read never replaces it.
        var read: UInt64 = 0
        var advanced: Int64 = 0
    }

    private let state = ParkingLock(State())
    private let observers = ParkingLock<[@Sendable () -> Void]>([])

    public init() {}

    /// Moves this process's clock on: jobs due within `duration` are due now, and are looked
    /// at at once.
    public func advance(by duration: Duration) {
        state.withLock { $0.advanced += duration.milliseconds }
        changed()
    }

    /// The shared setting, as read from the database by the read numbered `read`
    /// (`DevState.ticket()`, taken before the read began); one from an earlier read than
    /// the one in force is stale and ignored. Observers are told when it moved.
    func apply(_ setting: Setting, read: UInt64) {
        let moved = state.withLock { state -> Bool in
            guard read > state.read else { return false }
            defer { state.shared = setting; state.read = read }
            return state.shared != setting
        }
        if moved { changed() }
    }

    /// The shared setting this instance follows now.
    var setting: Setting { state.withLock { $0.shared } }

    /// `observer` runs (on the thread that moved it) each time the clock is moved.
    func onAdvance(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }

    private func changed() {
        for observer in observers.withLock({ $0 }) { observer() }
    }

    /// This machine's now, moved as the clock is, in whole seconds since 1970: for what is
    /// judged without the database (an ID token's `exp` and `iat`).
    var secondsSince1970: Int64 {
        millisecondsSince1970 / 1000
    }

    /// The same, in milliseconds: a change's age as the server measures it.
    var millisecondsSince1970: Int64 {
        let real = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        return state.withLock { state in
            (state.shared.frozenAt ?? real + state.shared.offsetMilliseconds) + state.advanced
        }
    }

    /// The machine's monotonic time moved as the clock is, in nanoseconds (never below zero):
    /// for windows counted in memory (the per-address rate limit), which a move of the clock
    /// moves on as it moves the database's (and which stand still while it is frozen).
    var uptimeNanoseconds: UInt64 {
        let real = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        let shift = millisecondsSince1970 - real
        // In floating point: an offset of centuries (a clock set far ahead) must not trap.
        let shifted = Double(DispatchTime.now().uptimeNanoseconds) + Double(shift) * 1e6
        return UInt64(min(max(shifted, 0), 1.8e19))
    }

    /// The clock's now in SQL: the moment it stands still at, else the statement's `now()`
    /// plus the offset; both bound as values, so that the statement's text, and its prepared
    /// plan, stay the same whatever the clock does.
    var now: SQLQuery {
        let (frozenAt, offset) = state.withLock { state -> (Int64?, Int64) in
            (state.shared.frozenAt.map { $0 + state.advanced }, state.shared.offsetMilliseconds + state.advanced)
        }
        // Never NULL: a bind's type is part of the prepared statement's key.
        let standing = Date(timeIntervalSince1970: Double(frozenAt ?? 0) / 1000)
        return "(CASE WHEN \(frozenAt != nil) THEN \(standing) ELSE now() + make_interval(secs => \(Double(offset) / 1000)) END)"
    }
}

extension ServerClock {
    /// The database's own now, unmoved: only for the clock's setting itself (`DevClock`
    /// works out an offset from it).
    static let realNow: SQLQuery = "now()"
}

extension Duration {
    /// Whole milliseconds (rounded down).
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
