import Dispatch

/// Holds a handler until the test lets it go, and tells the test when it got there: for
/// "a request is in flight" without sleeping. Both waits give up after `limit`, so a test
/// whose request never arrives fails instead of hanging the run.
public final class Gate: Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let limit: DispatchTimeInterval

    public init(limit: DispatchTimeInterval = .seconds(30)) {
        self.limit = limit
    }

    /// Called by the handler: announces itself, then waits to be let go.
    public func pass() {
        entered.signal()
        _ = released.wait(timeout: .now() + limit)
    }

    /// Whether a handler arrived in time.
    public func waitUntilEntered() -> Bool {
        entered.wait(timeout: .now() + limit) == .success
    }

    public func open() { released.signal() }
}
