import Dispatch
import Locking
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The portable poller (Darwin's, and Linux's with `EVENT_LOOP=dispatch`): Dispatch read and
/// write sources report readiness on one serial queue per poller, which hands it to the
/// loop's thread; `poll` waits on a semaphore for that, or for `wake`.
///
/// The rule for closing: `remove` returns only once Dispatch has let go of the descriptor
/// (the sources' cancel handlers have run), so a close right after it is safe. Closing a
/// descriptor a source still watches could let Dispatch report the events of a new socket
/// that reused its number to the old registration. Hence `remove` blocks briefly, and must
/// never be called from the poller's own queue (nothing here does: handlers only record).
///
/// Readiness is all Dispatch tells: a peer that hung up shows as readable and the read
/// returns 0, which the connection already treats as the end (`hangUp` is never set).
final class DispatchPoller: Poller, @unchecked Sendable {
    // `queue` and `wakeup` are immutable and thread-safe; everything that changes lives in
    // `state`, behind its lock, DispatchWatch objects included.
    private struct State: @unchecked Sendable {
        var watches: [Int32: DispatchWatch] = [:]
        /// Reported by the sources, not yet by `poll`, with their descriptors so that a
        /// `remove` can drop them.
        var ready: [(fd: Int32, event: PollEvent)] = []
        var woken = false
        /// `poll` waits on `wakeup` (or is about to): whoever adds to `ready` or wakes it
        /// signals once, and clears this so that nobody signals twice.
        var isWaiting = false
    }

    private let queue: DispatchQueue
    private let state = ParkingLock(State())
    private let wakeup = DispatchSemaphore(value: 0)

    init(label: String = "http-poller") {
        queue = DispatchQueue(label: label)
    }

    deinit {
        // The loop is gone; no one will close these descriptors on our account, so there is
        // nothing to wait for, but a suspended source must be resumed before it is released.
        let unused = DispatchGroup()
        state.withLock { state in
            for watch in state.watches.values { watch.cancel(notifying: unused) }
        }
    }

    func addListener(_ fd: Int32, token: UInt64) throws {
        try register(DispatchWatch(fd: fd, token: token, isListener: true), interest: .readable)
    }

    func removeListener(_ fd: Int32) {
        remove(fd)
    }

    func add(_ fd: Int32, token: UInt64, interest: PollInterest) throws {
        try register(DispatchWatch(fd: fd, token: token, isListener: false), interest: interest)
    }

    @discardableResult
    func rearm(_ fd: Int32, token: UInt64, interest: PollInterest) -> Bool {
        state.withLock { state in
            guard let watch = state.watches[fd], !watch.isListener else { return false }
            watch.token = token
            watch.arm(interest, on: queue, fired: firedHandler(fd))
            return true
        }
    }

    func remove(_ fd: Int32) {
        let released = DispatchGroup()
        state.withLock { state in
            guard let watch = state.watches.removeValue(forKey: fd) else { return }
            watch.cancel(notifying: released)
            state.ready.removeAll { $0.fd == fd }
        }
        released.wait()
    }

    func wake() {
        let mustSignal = state.withLock { state in
            state.woken = true
            return Self.takeWaiter(&state)
        }
        if mustSignal { wakeup.signal() }
    }

    func poll(timeoutMilliseconds: Int32, _ report: (PollEvent) -> Void) -> Bool {
        let mustWait = state.withLock { state in
            state.isWaiting = state.ready.isEmpty && !state.woken
            return state.isWaiting
        }
        if mustWait && wakeup.wait(timeout: Self.deadline(timeoutMilliseconds)) == .timedOut {
            // Timed out, but someone may have seen us waiting and be about to signal: take
            // that signal now, or it would end the next wait before it began.
            let signalComing = state.withLock { state in
                defer { state.isWaiting = false }
                return !state.isWaiting
            }
            if signalComing { wakeup.wait() }
        }
        let (ready, woken) = state.withLock { state in
            defer {
                state.ready = []
                state.woken = false
            }
            return (state.ready, state.woken)
        }
        for (_, event) in ready { report(event) }
        rearmListeners(among: ready)
        return woken
    }

    // MARK: Internals

    private func register(_ watch: DispatchWatch, interest: PollInterest) throws {
        try state.withLock { state in
            guard state.watches[watch.fd] == nil else { throw SocketError("watching descriptor \(watch.fd)", errno: EEXIST) }
            state.watches[watch.fd] = watch
            watch.arm(interest, on: queue, fired: firedHandler(watch.fd))
        }
    }

    private func firedHandler(_ fd: Int32) -> @Sendable (PollInterest) -> Void {
        { [weak self] direction in self?.fired(fd, direction) }
    }

    /// On the queue: a source of `fd` is ready in `direction`.
    private func fired(_ fd: Int32, _ direction: PollInterest) {
        let mustSignal = state.withLock { state -> Bool in
            guard let watch = state.watches[fd], watch.takeEvent(direction) else { return false }
            state.ready.append((fd, PollEvent(token: watch.token, readable: direction == .readable,
                                              writable: direction == .writable, hangUp: false)))
            return Self.takeWaiter(&state)
        }
        if mustSignal { wakeup.signal() }
    }

    /// A listener stays watched for as long as it is registered (as epoll's level-triggered
    /// one is); it was silenced only until the loop had accepted what was waiting.
    private func rearmListeners(among reported: [(fd: Int32, event: PollEvent)]) {
        guard reported.contains(where: { $0.event.readable }) else { return }
        state.withLock { state in
            for (fd, _) in reported {
                guard let watch = state.watches[fd], watch.isListener, watch.armed.isEmpty else { continue }
                watch.arm(.readable, on: queue, fired: firedHandler(fd))
            }
        }
    }

    private static func takeWaiter(_ state: inout State) -> Bool {
        defer { state.isWaiting = false }
        return state.isWaiting
    }

    private static func deadline(_ milliseconds: Int32) -> DispatchTime {
        milliseconds < 0 ? .distantFuture : .now() + .milliseconds(Int(milliseconds))
    }
}
