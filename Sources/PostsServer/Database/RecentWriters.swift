import Foundation
import Locking
import Postgres

/// Who wrote lately on this instance (users, or client addresses), and where in the
/// primary's log their last write ended: so that a client that does not send `Read-After`
/// back (the firefly app) still reads its own writes. Bounded both ways: an entry lasts as
/// long as a replica taking reads may lack it (`keep`), and past `capacity` writers the
/// oldest entries go first (their reads then trust the lag limit alone).
final class RecentWriters<Writer: Hashable & Sendable>: Sendable {
    private struct State {
        var positions: [Writer: (position: LogSequenceNumber, at: ContinuousClock.Instant)] = [:]
        /// Entries in the order they were made; a writer written again has an older, stale one too.
        var order: [(user: Writer, at: ContinuousClock.Instant)] = []
        var orderStart = 0
    }

    private let keep: Duration
    private let capacity: Int
    private let state = ParkingLock(State())

    init(keep: Duration, capacity: Int = 100_000) {
        self.keep = keep
        self.capacity = capacity
    }

    func remember(_ user: Writer, wroteUpTo position: LogSequenceNumber, now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            // One entry a writer: the highest position still in force, kept from this write
            // on (a higher one made earlier — `primary` after a failed measurement — still
            // holds, and now for as long as this write needs; one past its time is dropped).
            let inForce = state.positions[user].flatMap { now - $0.at <= keep ? $0.position : nil }
            state.positions[user] = (max(inForce ?? position, position), now)
            state.order.append((user, now))
            forget(&state, now: now)
        }
    }

    /// The position `user` last wrote up to, while a replica may still lack it.
    func position(of user: Writer, now: ContinuousClock.Instant = .now) -> LogSequenceNumber? {
        state.withLock { state in
            guard let entry = state.positions[user], now - entry.at <= keep else { return nil }
            return entry.position
        }
    }

    var count: Int { state.withLock { $0.positions.count } }

    private func forget(_ state: inout State, now: ContinuousClock.Instant) {
        while state.orderStart < state.order.count {
            let oldest = state.order[state.orderStart]
            guard now - oldest.at > keep || state.positions.count > capacity else { break }
            if state.positions[oldest.user]?.at == oldest.at { state.positions[oldest.user] = nil }
            state.orderStart += 1
        }
        // The consumed front is dropped once it is half the list: amortized O(1) a write.
        if state.orderStart > 1024 && state.orderStart * 2 > state.order.count {
            state.order.removeFirst(state.orderStart)
            state.orderStart = 0
        }
    }
}
