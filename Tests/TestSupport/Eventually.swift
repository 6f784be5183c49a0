import Foundation

// The one way a test waits for what the server does on its own threads (a close it has yet
// to notice, a row another thread writes, the xmin horizon another test's transaction holds
// back): look, and look again after a short pause, until it holds or a deadline passes.
// Never a fixed sleep that hopes the thing has happened meanwhile. The deadline is generous:
// it costs only a failing test, and the whole test run shares two cores. Jobs are not waited
// for this way: `JobRunner.drain` runs them.

/// True once `condition` holds; false when `timeout` passes first.
public func eventually(timeout: Duration = .seconds(30), _ condition: () throws -> Bool) rethrows -> Bool {
    try eventuallyValue(timeout: timeout) { try condition() ? true : nil } ?? false
}

/// The first value `produce` gives, or nil when `timeout` passes first.
public func eventuallyValue<T>(timeout: Duration = .seconds(30), _ produce: () throws -> T?) rethrows -> T? {
    let deadline = ContinuousClock.now + timeout
    var pause = EventuallyPause()
    while true {
        if let value = try produce() { return value }
        guard ContinuousClock.now < deadline else { return nil }
        usleep(pause.next())
    }
}

/// `eventually` for async tests: the pause suspends the task, never a thread of the
/// cooperative pool (a blocked one can starve the task the test waits for).
public func eventually(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    var pause = EventuallyPause()
    while true {
        if try await condition() { return true }
        guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
        try? await Task.sleep(for: .microseconds(pause.next()))
    }
}

/// The pause between two looks: 1 ms, doubling to 16 ms, so that what is quick is seen at
/// once and what is slow is not asked about hundreds of times a second.
private struct EventuallyPause {
    private var microseconds: UInt32 = 1_000

    mutating func next() -> UInt32 {
        defer { microseconds = min(microseconds * 2, 16_000) }
        return microseconds
    }
}
