import Dispatch
import Foundation
import Locking

/// One thread waiting on its poller over its share of the connections.
///
/// The concurrency story of the server, in one place: every socket is watched one-shot, so
/// at any moment exactly one thread owns a connection. The loop owns it while it waits for
/// input, for room to write, or for body memory, and while a response stream is open; when
/// a request is complete the loop hands it to a worker (handlers block on the database),
/// and the worker writes the answer itself, parses any pipelined request, and gives the
/// connection back by re-arming it. Nothing about a connection is locked because nothing is
/// shared: only ownership moves, and the `ownedByWorker` flag tells the loop which
/// connections are not its to touch. Other threads reach a connection only through the
/// loop: a stream's producer or the body budget *schedules* it, and the loop acts on it when
/// it owns it. Each loop also accepts, and the poller spreads new connections over the loops.
final class EventLoop: @unchecked Sendable {
    enum Command: Sendable {
        case stopAccepting
        /// Accepts what waits in the listen backlog: those clients have connected and may
        /// have sent a request before the stop; they are served like the rest, not reset.
        case acceptBacklog
        /// The stop has begun: close what is idle, end streams, let requests in flight finish.
        case closeIdleConnections
        case closeAllConnections
        case exit
    }

    private struct Inbox: Sendable {
        var commands: [(Command, DispatchSemaphore)] = []
        /// Connections someone asked the loop to look at (stream output, body memory).
        var scheduled: [UInt64] = []
    }

    private static let listenerToken = UInt64.max - 1

    let core: ServerCore
    let poller: any Poller
    private let index: Int
    private let listener: Int32
    /// One read buffer for the loop's own reads; workers never read.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    private let connections = ParkingLock<[UInt64: HTTPConnection]>([:])
    private let inbox = ParkingLock(Inbox())
    // Loop thread only:
    private var nextID: UInt64 = 0
    private var accepting = true
    private var acceptPausedUntil: UInt64 = 0
    private var running = true
    private let finished = DispatchSemaphore(value: 0)

    init(index: Int, listener: Int32, core: ServerCore, poller: any Poller) throws {
        self.index = index
        self.listener = listener
        self.core = core
        self.poller = poller
        try poller.addListener(listener, token: Self.listenerToken)
    }

    deinit { readBuffer.deallocate() }

    func start() {
        let thread = Thread { [self] in
            ThreadName.set("http-loop-\(index)")
            run()
            finished.signal()
        }
        thread.start()
    }

    /// Runs a command on the loop thread and waits until it has run.
    func perform(_ command: Command) {
        let done = DispatchSemaphore(value: 0)
        inbox.withLock { $0.commands.append((command, done)) }
        poller.wake()
        done.wait()
        if case .exit = command { finished.wait() }
    }

    /// Asks the loop to look at a connection soon, from any thread. A connection that is
    /// gone or owned by a worker by then is skipped: whoever hands it back schedules again.
    func schedule(_ id: UInt64) {
        let wasEmpty = inbox.withLock { box -> Bool in
            box.scheduled.append(id)
            return box.scheduled.count == 1 && box.commands.isEmpty
        }
        if wasEmpty { poller.wake() }
    }

    // MARK: The loop

    private func run() {
        let sweepInterval = core.configuration.sweepInterval
        let sweepMilliseconds = Int32(max(1, sweepInterval.nanoseconds / 1_000_000))
        var nextSweep = DispatchTime.now().uptimeNanoseconds
        while running {
            let woken = poller.poll(timeoutMilliseconds: sweepMilliseconds) { event in
                if event.token == Self.listenerToken {
                    acceptPending()
                } else {
                    connections.withLock { $0[event.token] }?.handle(event)
                }
            }
            if woken { runInbox() }
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
        acceptConnections(upTo: 64)
    }

    private func acceptConnections(upTo limit: Int) {
        for _ in 0..<limit {
            switch Socket.accept(listener) {
            case .accepted(let fd, let peerAddress):
                // Past a cap a connection is accepted (so it leaves the backlog and the
                // listener stops being readable) and closed: the client learns at once.
                guard core.connectionCount < core.configuration.maxConnections else {
                    core.connectionRefused()
                    Socket.close(fd)
                    continue
                }
                let countedAs: String?
                switch core.connectionsPerAddress.claim(peer: peerAddress) {
                case .refused:
                    core.connectionRefused()
                    Socket.close(fd)
                    continue
                case .uncounted: countedAs = nil
                case .counted(let key): countedAs = key
                }
                nextID += 1
                let id = UInt64(index) << 48 | nextID
                let connection = HTTPConnection(id: id, fd: fd, peerAddress: peerAddress, countedAs: countedAs, loop: self)
                connections.withLock { $0[id] = connection }
                core.connectionOpened()
                do {
                    try poller.add(fd, token: id, interest: .readable)
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
        poller.removeListener(listener)
    }

    private func sweep(now: UInt64) {
        if !accepting && acceptPausedUntil != 0 && now >= acceptPausedUntil && !core.isStopping {
            acceptPausedUntil = 0
            accepting = (try? poller.addListener(listener, token: Self.listenerToken)) != nil
        }
        for connection in snapshot() where !connection.isOwnedByWorker {
            connection.checkDeadline(now: now)
        }
    }

    private func snapshot() -> [HTTPConnection] {
        connections.withLock { Array($0.values) }
    }

    private func runInbox() {
        let box = inbox.withLock { box -> Inbox in
            defer { box = Inbox() }
            return box
        }
        for id in box.scheduled {
            guard let connection = connections.withLock({ $0[id] }), !connection.isOwnedByWorker else { continue }
            connection.handleScheduled()
        }
        for (command, done) in box.commands {
            run(command)
            done.signal()
        }
    }

    private func run(_ command: Command) {
        switch command {
        case .stopAccepting:
            if accepting { poller.removeListener(listener) }
            accepting = false
            acceptPausedUntil = 0
        case .acceptBacklog:
            acceptConnections(upTo: Int.max)
        case .closeIdleConnections:
            for connection in snapshot() where !connection.isOwnedByWorker {
                connection.beginShutdown()
            }
        case .closeAllConnections:
            for connection in snapshot() {
                if connection.isOwnedByWorker {
                    connection.cutOff()
                } else {
                    connection.close()
                }
            }
        case .exit:
            running = false
        }
    }

    // MARK: Used by connections (from whichever thread owns them)

    func forget(_ fd: Int32, id: UInt64) {
        poller.remove(fd)
        connections.withLock { $0[id] = nil }
    }
}
