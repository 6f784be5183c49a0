import Dispatch

/// Holds a handler until the test lets it go, and tells the test when it got there: for
/// "a request is in flight" without sleeping.
public final class Gate: Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    public init() {}

    /// Called by the handler: announces itself, then waits to be let go.
    public func pass() {
        entered.signal()
        released.wait()
    }

    public func waitUntilEntered() { entered.wait() }

    public func open() { released.signal() }
}
