import Locking

/// The memory all connections together may hold in request bodies being received
/// (`MAX_BODY_MEMORY`). A request reserves what its consumer may hold before its body is
/// read; when the budget is spent, the connection simply stops reading until a reservation
/// is given back (backpressure: TCP slows the client down), and is woken then.
///
/// A body waits with nothing reserved and, once it has its reservation, needs nothing more
/// to finish: so waiting cannot deadlock, and how long a reservation is held is bounded by
/// the body's minimum rate.
final class BodyMemoryBudget: Sendable {
    typealias Waiter = @Sendable () -> Void

    private struct State {
        var available: Int
        var waiters: [Waiter] = []
    }

    let capacity: Int
    private let state: ParkingLock<State>

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        state = ParkingLock(State(available: self.capacity))
    }

    /// Reserves `bytes` (at most the whole budget, so that any single body can fit) and
    /// returns the amount reserved; or nil, and `waiter` runs once memory has been given back.
    func reserve(_ bytes: Int, orWait waiter: @escaping Waiter) -> Int? {
        let amount = min(max(0, bytes), capacity)
        return state.withLock { state -> Int? in
            if amount <= state.available {
                state.available -= amount
                return amount
            }
            state.waiters.append(waiter)
            return nil
        }
    }

    /// Gives a reservation back and wakes everyone waiting: each tries again, and those
    /// that still do not fit wait again.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        let woken = state.withLock { state -> [Waiter] in
            state.available += bytes
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in woken { waiter() }
    }

    var inUse: Int { capacity - state.withLock { $0.available } }

    /// Bodies waiting for memory now.
    var waiting: Int { state.withLock { $0.waiters.count } }
}
