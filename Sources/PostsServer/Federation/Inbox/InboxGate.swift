import Dispatch
import Synchronization

/// Bounds work that waits on other servers (API.md "Safety": a flood of inbox requests
/// cannot starve the API): at most `limit` requests are checked and applied at once (a check
/// may wait for another server's key), at most `limit` more wait up to two seconds for a
/// turn, and the rest are answered `429` at once. So the inbox holds at most `2 × limit` of
/// the server's workers, and the API keeps the others. (Lookups of remote accounts have a
/// gate of their own.)
final class InboxGate: Sendable {
    let limit: Int
    private let turns: DispatchSemaphore
    private let waiting = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = max(1, limit)
        turns = DispatchSemaphore(value: self.limit)
    }

    /// Requests in a turn or waiting for one.
    var occupancy: Int { waiting.load(ordering: .relaxed) }

    /// Runs `body` in a turn; nil when none was had (the caller answers 429).
    func run<T>(_ body: () throws -> T) rethrows -> T? {
        guard waiting.add(1, ordering: .relaxed).newValue <= limit * 2 else {
            waiting.subtract(1, ordering: .relaxed)
            return nil
        }
        defer { waiting.subtract(1, ordering: .relaxed) }
        guard turns.wait(timeout: .now() + .seconds(2)) == .success else { return nil }
        defer { turns.signal() }
        return try body()
    }
}
