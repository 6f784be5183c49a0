import CLinux
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
import Locking
#endif

/// One thread waiting in `epoll_wait` over its share of the connections.
///
/// The concurrency story of the server, in one place: every socket is registered with
/// EPOLLONESHOT, so at any moment exactly one thread owns a connection. The loop owns it
/// while it waits for input or for room to write; when a request is complete the loop
/// hands it to a worker (handlers block on the database), and the worker writes the
/// answer itself, parses any pipelined request, and gives the connection back by
/// re-arming it. Nothing about a connection is locked because nothing is shared: only
/// ownership moves, and the `ownedByWorker` flag tells the loop's timeout sweep which
/// connections are not its to touch. Each loop also accepts (EPOLLEXCLUSIVE), so the
/// kernel spreads new connections over the loops.
final class EventLoop: @unchecked Sendable {
    enum Command {
        case stopAccepting
        case closeIdleConnections
        case closeAllConnections
        case exit
    }

    private static let wakeID = UInt64.max
    private static let listenerID = UInt64.max - 1

    let core: ServerCore
    private let index: Int
    private let epoll: Int32
    private let wakePipe: (read: Int32, write: Int32)
    private let listener: Int32
    private let sweepInterval: Duration
    /// One read buffer for the loop's own reads; workers never read.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    private let connections = ParkingLock<[UInt64: HTTPConnection]>([:])
    private let commands = ParkingLock<[(Command, DispatchSemaphore)]>([])
    // Loop thread only:
    private var nextID: UInt64 = 0
    private var accepting = true
    private var acceptPausedUntil: UInt64 = 0
    private var running = true
    private let finished = DispatchSemaphore(value: 0)

    init(index: Int, listener: Int32, core: ServerCore, sweepInterval: Duration) throws {
        self.index = index
        self.listener = listener
        self.core = core
        self.sweepInterval = sweepInterval
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw SocketError("epoll_create1") }
        var fds: [Int32] = [0, 0]
        guard clinux_pipe_nonblocking(&fds) == 0 else { throw SocketError("pipe2") }
        wakePipe = (fds[0], fds[1])
        try register(wakePipe.read, id: Self.wakeID, events: EPOLLIN.rawValue)
        try register(listener, id: Self.listenerID, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue)
    }

    /// The descriptors close only when no connection can use them any more: closing the
    /// epoll descriptor while a late worker still re-arms could hit a reused number.
    deinit {
        Glibc.close(epoll)
        Glibc.close(wakePipe.read)
        Glibc.close(wakePipe.write)
        readBuffer.deallocate()
    }

    func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "http-loop-\(index)"
        thread.start()
    }

    /// Runs a command on the loop thread and waits until it has run.
    func perform(_ command: Command) {
        let done = DispatchSemaphore(value: 0)
        commands.withLock { $0.append((command, done)) }
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
        done.wait()
        if case .exit = command { finished.wait() }
    }

    // MARK: The loop

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        let sweepMilliseconds = Int32(max(1, sweepInterval.components.seconds * 1000
            + sweepInterval.components.attoseconds / 1_000_000_000_000_000))
        var nextSweep = DispatchTime.now().uptimeNanoseconds
        while running {
            let count = epoll_wait(epoll, &events, Int32(events.count), sweepMilliseconds)
            for event in events.prefix(max(0, Int(count))) {
                switch event.data.u64 {
                case Self.wakeID: runCommands()
                case Self.listenerID: acceptPending()
                case let id:
                    connections.withLock { $0[id] }?.handle(events: event.events)
                }
            }
            let now = DispatchTime.now().uptimeNanoseconds
            if now >= nextSweep {
                sweep(now: now)
                nextSweep = now + sweepInterval.nanoseconds
            }
        }
    }

    private func acceptPending() {
        // A listener event can share a batch with the stop command that came before it:
        // by then the server may have closed the listening descriptor.
        guard accepting else { return }
        for _ in 0..<64 {
            switch Socket.accept(listener) {
            case .accepted(let fd, let remoteAddress):
                nextID += 1
                let id = UInt64(index) << 48 | nextID
                let connection = HTTPConnection(id: id, fd: fd, remoteAddress: remoteAddress, loop: self)
                connections.withLock { $0[id] = connection }
                core.connectionOpened()
                do {
                    try register(fd, id: id, events: EPOLLIN.rawValue | EPOLLONESHOT.rawValue)
                } catch {
                    connection.close()
                }
            case .wouldBlock:
                return
            case .failed(let error):
                // Out of descriptors (EMFILE) leaves the listener readable: pause, do not spin.
                core.logger.error("accept failed", metadata: ["error": "\(error)"])
                pauseAccepting()
                return
            }
        }
    }

    private func pauseAccepting() {
        guard accepting else { return }
        accepting = false
        acceptPausedUntil = DispatchTime.now().uptimeNanoseconds + 100_000_000
        epoll_ctl(epoll, EPOLL_CTL_DEL, listener, nil)
    }

    private func sweep(now: UInt64) {
        if !accepting && acceptPausedUntil != 0 && now >= acceptPausedUntil && !core.isStopping {
            acceptPausedUntil = 0
            accepting = (try? register(listener, id: Self.listenerID,
                                       events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue)) != nil
        }
        for connection in connections.withLock({ Array($0.values) }) where !connection.isOwnedByWorker {
            connection.checkDeadline(now: now)
        }
    }

    private func runCommands() {
        var byte = [UInt8](repeating: 0, count: 64)
        while read(wakePipe.read, &byte, byte.count) > 0 {}
        let pending = commands.withLock { list in
            defer { list = [] }
            return list
        }
        for (command, done) in pending {
            switch command {
            case .stopAccepting:
                if accepting { epoll_ctl(epoll, EPOLL_CTL_DEL, listener, nil) }
                accepting = false
                acceptPausedUntil = 0
            case .closeIdleConnections:
                for connection in connections.withLock({ Array($0.values) }) where !connection.isOwnedByWorker {
                    connection.beginShutdown()
                }
            case .closeAllConnections:
                for connection in connections.withLock({ Array($0.values) }) {
                    if connection.isOwnedByWorker {
                        connection.cutOff()
                    } else {
                        connection.close()
                    }
                }
            case .exit:
                running = false
            }
            done.signal()
        }
    }

    // MARK: Used by connections (from whichever thread owns them)

    func register(_ fd: Int32, id: UInt64, events: UInt32) throws {
        var event = epoll_event()
        event.events = events
        event.data.u64 = id
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0 else { throw SocketError("epoll_ctl(ADD)") }
    }

    /// Hands the connection back to the loop, interested in input or in room to write.
    func rearm(_ fd: Int32, id: UInt64, forOutput: Bool) -> Bool {
        var event = epoll_event()
        event.events = (forOutput ? EPOLLOUT.rawValue : EPOLLIN.rawValue) | EPOLLONESHOT.rawValue
        event.data.u64 = id
        return epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event) == 0
    }

    func forget(_ fd: Int32, id: UInt64) {
        epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nil)
        connections.withLock { $0[id] = nil }
    }
}
