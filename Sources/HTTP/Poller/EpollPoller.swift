#if os(Linux)
import CLinux
import Glibc

/// The Linux poller: one epoll instance per loop, woken through an eventfd.
final class EpollPoller: Poller, @unchecked Sendable {
    // The descriptors never change after init, and the event buffer is touched only by the
    // one thread that calls `poll`: nothing here is shared mutable state.
    private let epoll: Int32
    private let wakeFD: Int32
    private let events: UnsafeMutableBufferPointer<epoll_event>
    private static let wakeToken = UInt64.max

    init(capacity: Int = 256) throws {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw SocketError("epoll_create1") }
        wakeFD = clinux_eventfd_nonblocking()
        guard wakeFD >= 0 else {
            let error = SocketError("eventfd")
            systemClose(epoll)
            throw error
        }
        events = .allocate(capacity: capacity)
        // Every property is set: a throw from here on runs deinit, which closes them.
        try control(EPOLL_CTL_ADD, wakeFD, token: Self.wakeToken, events: EPOLLIN.rawValue)
    }

    /// Closed only when no connection can use them any more: a late worker re-arming on a
    /// closed (and reused) epoll descriptor would touch someone else's file.
    deinit {
        systemClose(wakeFD)
        systemClose(epoll)
        events.deallocate()
    }

    func addListener(_ fd: Int32, token: UInt64) throws {
        // EXCLUSIVE: a new connection wakes one loop, not all of them.
        try control(EPOLL_CTL_ADD, fd, token: token, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue)
    }

    func removeListener(_ fd: Int32) {
        epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nil)
    }

    func add(_ fd: Int32, token: UInt64, interest: PollInterest) throws {
        try control(EPOLL_CTL_ADD, fd, token: token, events: Self.flags(interest))
    }

    @discardableResult
    func rearm(_ fd: Int32, token: UInt64, interest: PollInterest) -> Bool {
        (try? control(EPOLL_CTL_MOD, fd, token: token, events: Self.flags(interest))) != nil
    }

    func remove(_ fd: Int32) {
        epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nil)
    }

    func wake() {
        var one: UInt64 = 1
        _ = systemWrite(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    func poll(timeoutMilliseconds: Int32, _ report: (PollEvent) -> Void) -> Bool {
        let count = epoll_wait(epoll, events.baseAddress, Int32(events.count), timeoutMilliseconds)
        var woken = false
        for event in events.prefix(max(0, Int(count))) {
            if event.data.u64 == Self.wakeToken {
                var counter: UInt64 = 0
                _ = systemRead(wakeFD, &counter, MemoryLayout<UInt64>.size)
                woken = true
                continue
            }
            let flags = event.events
            report(PollEvent(token: event.data.u64,
                             readable: flags & EPOLLIN.rawValue != 0,
                             writable: flags & EPOLLOUT.rawValue != 0,
                             hangUp: flags & (EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue) != 0))
        }
        return woken
    }

    private func control(_ operation: Int32, _ fd: Int32, token: UInt64, events: UInt32) throws {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token
        guard epoll_ctl(epoll, operation, fd, &event) == 0 else { throw SocketError("epoll_ctl") }
    }

    private static func flags(_ interest: PollInterest) -> UInt32 {
        var flags = EPOLLONESHOT.rawValue
        if interest.contains(.readable) { flags |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if interest.contains(.writable) { flags |= EPOLLOUT.rawValue }
        return flags
    }
}
#endif
