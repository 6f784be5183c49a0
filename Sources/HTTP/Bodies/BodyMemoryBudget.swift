import Locking
import Synchronization

/// The memory all connections together may hold in request bodies being received
/// (`MAX_BODY_MEMORY`). A request reserves what its consumer may hold before its body is
/// read; when the budget is spent, the connection simply stops reading (backpressure: TCP
/// slows the client down) and waits its turn, first come first served, until memory is
/// given back; then it is granted its share and woken.
///
/// A body waits with nothing reserved and, once granted, needs nothing more to finish: so
/// waiting cannot deadlock, and how long a grant is held is bounded by the body's minimum
/// rate. How long a body may wait is the connection's business (it answers 503).
final class BodyMemoryBudget: Sendable {
    /// One body's claim on the budget.
    final class Ticket: Sendable {
        let bytes: Int
        fileprivate let onGrant: @Sendable () -> Void
        fileprivate let state = Atomic<UInt8>(State.waiting)

        fileprivate enum State {
            static let waiting: UInt8 = 0
            static let granted: UInt8 = 1
            static let returned: UInt8 = 2
        }

        fileprivate init(bytes: Int, onGrant: @escaping @Sendable () -> Void) {
            self.bytes = bytes
            self.onGrant = onGrant
        }

        var isGranted: Bool { state.load(ordering: .acquiring) == State.granted }
    }

    private struct Queue: Sendable {
        var available: Int
        var waiting: [Ticket] = []
    }

    let capacity: Int
    private let queue: ParkingLock<Queue>

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        queue = ParkingLock(Queue(available: self.capacity))
    }

    /// A claim on `bytes` (at most the whole budget, so that any single body can fit),
    /// granted at once if nobody waits before it and it fits; otherwise it waits in line and
    /// `onGrant` runs (on the thread that gave memory back) when it is granted.
    func claim(_ bytes: Int, onGrant: @escaping @Sendable () -> Void) -> Ticket {
        let ticket = Ticket(bytes: min(max(0, bytes), capacity), onGrant: onGrant)
        queue.withLock { queue in
            if queue.waiting.isEmpty && ticket.bytes <= queue.available {
                queue.available -= ticket.bytes
                ticket.state.store(Ticket.State.granted, ordering: .releasing)
            } else {
                queue.waiting.append(ticket)
            }
        }
        return ticket
    }

    /// Gives a ticket's memory back (or takes it out of the line, if it was still waiting)
    /// and grants the tickets now at the front of the line that fit. Safe to call twice.
    func giveBack(_ ticket: Ticket) {
        let granted = queue.withLock { queue -> [Ticket] in
            let previous = ticket.state.exchange(Ticket.State.returned, ordering: .acquiringAndReleasing)
            switch previous {
            case Ticket.State.granted: queue.available += ticket.bytes
            case Ticket.State.waiting: queue.waiting.removeAll { $0 === ticket }
            default: return []
            }
            var granted: [Ticket] = []
            while let next = queue.waiting.first, next.bytes <= queue.available {
                queue.waiting.removeFirst()
                queue.available -= next.bytes
                next.state.store(Ticket.State.granted, ordering: .releasing)
                granted.append(next)
            }
            return granted
        }
        for ticket in granted { ticket.onGrant() }
    }

    var inUse: Int { capacity - queue.withLock { $0.available } }

    /// Bodies waiting for memory now.
    var waiting: Int { queue.withLock { $0.waiting.count } }
}
