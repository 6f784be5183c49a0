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
///
/// One client address (`ClientKey`) may hold or queue at most a quarter of the budget. Its
/// claims past that wait aside, not in the line, and join it as its own bodies finish: a
/// client trickling a few slow bodies cannot make everyone else's writes wait.
final class BodyMemoryBudget: Sendable {
    /// One body's claim on the budget.
    final class Ticket: Sendable {
        let bytes: Int
        let client: String
        fileprivate let onGrant: @Sendable () -> Void
        fileprivate let state = Atomic<UInt8>(State.waiting)

        fileprivate enum State {
            static let waiting: UInt8 = 0
            static let granted: UInt8 = 1
            static let returned: UInt8 = 2
        }

        fileprivate init(bytes: Int, client: String, onGrant: @escaping @Sendable () -> Void) {
            self.bytes = bytes
            self.client = client
            self.onGrant = onGrant
        }

        var isGranted: Bool { state.load(ordering: .acquiring) == State.granted }
    }

    private struct Queue: Sendable {
        var available: Int
        var waiting: [Ticket] = []
        /// Bytes each client holds or waits for in the line; a client with none is absent.
        var committed: [String: Int] = [:]
        /// Claims of clients past their share, in the order they came.
        var aside: [Ticket] = []

        /// Puts a claim in the line, or grants it at once (true) if nobody waits before it
        /// and it fits.
        @discardableResult
        mutating func enter(_ ticket: Ticket) -> Bool {
            committed[ticket.client, default: 0] += ticket.bytes
            guard waiting.isEmpty && ticket.bytes <= available else {
                waiting.append(ticket)
                return false
            }
            available -= ticket.bytes
            ticket.state.store(Ticket.State.granted, ordering: .releasing)
            return true
        }

        mutating func release(_ ticket: Ticket) {
            let left = (committed[ticket.client] ?? 0) - ticket.bytes
            committed[ticket.client] = left > 0 ? left : nil
        }
    }

    let capacity: Int
    /// What one client may hold or queue; always room for one body of any allowed size.
    let clientShare: Int
    private let queue: ParkingLock<Queue>

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        clientShare = max(self.capacity / 4, 1)
        queue = ParkingLock(Queue(available: self.capacity))
    }

    /// A claim on `bytes` (at most the whole budget, so that any single body can fit) for
    /// `client`, granted at once if nobody waits before it and it fits; otherwise it waits
    /// and `onGrant` runs (on the thread that gave memory back) when it is granted.
    func claim(_ bytes: Int, client: String, onGrant: @escaping @Sendable () -> Void) -> Ticket {
        let ticket = Ticket(bytes: min(max(0, bytes), capacity), client: client, onGrant: onGrant)
        queue.withLock { queue in
            if fitsShare(ticket, queue.committed[client] ?? 0) {
                queue.enter(ticket)
            } else {
                queue.aside.append(ticket)
            }
        }
        return ticket
    }

    /// A client with nothing committed always fits, whatever its body's size.
    private func fitsShare(_ ticket: Ticket, _ committed: Int) -> Bool {
        committed == 0 || committed + ticket.bytes <= clientShare
    }

    /// Gives a ticket's memory back (or takes it out of the line, if it was still waiting)
    /// and grants the tickets now at the front of the line that fit. Safe to call twice.
    func giveBack(_ ticket: Ticket) {
        let granted = queue.withLock { queue -> [Ticket] in
            let previous = ticket.state.exchange(Ticket.State.returned, ordering: .acquiringAndReleasing)
            switch previous {
            case Ticket.State.granted:
                queue.available += ticket.bytes
                queue.release(ticket)
            case Ticket.State.waiting:
                if let index = queue.aside.firstIndex(where: { $0 === ticket }) {
                    queue.aside.remove(at: index)
                    return []
                }
                queue.waiting.removeAll { $0 === ticket }
                queue.release(ticket)
            default: return []
            }
            var granted: [Ticket] = []
            // The client's claims set aside that now fit its share join the line.
            var index = 0
            while index < queue.aside.count {
                let next = queue.aside[index]
                if next.client == ticket.client, fitsShare(next, queue.committed[next.client] ?? 0) {
                    queue.aside.remove(at: index)
                    if queue.enter(next) { granted.append(next) }
                } else {
                    index += 1
                }
            }
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

    /// Bodies waiting for memory now, in the line or set aside.
    var waiting: Int { queue.withLock { $0.waiting.count + $0.aside.count } }
}
