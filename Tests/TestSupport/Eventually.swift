import Foundation

/// Polls `condition` until it holds or `timeout` passes: for what the server does on its
/// own threads after the client's side is done (a close it has yet to notice), where no
/// answer tells the test it happened. False on timeout, which is generous: it costs only
/// a failing test, and the whole test run shares two cores.
public func eventually(timeout: Duration = .seconds(30), _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        usleep(2_000)
    }
    return try condition()
}
