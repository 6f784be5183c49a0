import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One client connection. Requests are handled one at a time (pipelined ones wait in the
/// parser), so answers keep their order. Whoever owns the connection — its loop or, while
/// a request is handled, a worker — runs the same steps; see `EventLoop` for how ownership
/// moves. Its state — the phase and what the phase owns — is one value, `ConnectionState`;
/// this class performs what that state machine asks with the socket, the parser and the
/// outbox. The request side (parsing, bodies) and the response side (bytes, files,
/// streams) live in the two extensions beside this file.
final class HTTPConnection: @unchecked Sendable {
    /// What the owner does next.
    enum Step {
        case handle(ServerCore.Exchange)
        /// The current request's head goes to a worker for admission before its body is read.
        case admit(Admission)
        case awaitInput
        case awaitOutput
        case awaitMemory
        /// An upload's disk writes are behind: nothing is read until they catch up.
        case awaitWrites
        case stream
        case linger
        case close
    }

    let id: UInt64
    let socket: ConnectionSocket
    /// Strong: a worker may finish with this connection after the server has stopped.
    let loop: EventLoop
    let core: ServerCore
    /// The TCP peer's address. The client's may differ (`clientAddress(of:)`).
    let peerAddress: String
    /// The peer is a trusted proxy: its requests' `X-Forwarded-For` names their client.
    let peerIsTrustedProxy: Bool
    /// The key this connection is counted under against `maxConnectionsPerIP`, given back
    /// when it closes; nil when it is not counted.
    private let countedAs: String?
    private let ownedByWorker = Atomic<Bool>(false)
    /// Wakes this connection on its loop: memory granted, an upload's writes caught up.
    let wakeOnLoop: @Sendable () -> Void

    // Touched only by the current owner.
    var parser: RequestParser
    /// The phase and what it owns (the request in flight, its body, its memory).
    var state: ConnectionState
    var outbox: [UInt8] = []
    var outboxSent = 0
    var pendingFile: (body: FileBody, offset: Int)?
    var stream: OpenStream?

    init(id: UInt64, fd: Int32, peerAddress: String, countedAs: String?, loop: EventLoop) {
        self.id = id
        self.socket = ConnectionSocket(fd: fd)
        self.peerAddress = peerAddress
        self.countedAs = countedAs
        self.loop = loop
        self.core = loop.core
        self.peerIsTrustedProxy = loop.core.configuration.trustedProxies.trusts(peer: peerAddress)
        self.wakeOnLoop = { [loop] in loop.schedule(id) }
        self.parser = RequestParser(limits: loop.core.configuration.limits)
        self.state = ConnectionState(timeouts: loop.core.timeouts,
                                     maxRequestsPerConnection: loop.core.configuration.maxRequestsPerConnection,
                                     openedAt: Self.now())
    }

    var isOwnedByWorker: Bool { ownedByWorker.load(ordering: .sequentiallyConsistent) }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    // MARK: On the loop

    /// A poller event for this connection (now disarmed, and the loop's).
    func handle(_ event: PollEvent) {
        // The acquire pairs with the worker's release in `release(_:onWorker:)`: the kernel
        // orders re-arm before event, but only this load makes the worker's writes ours.
        guard !ownedByWorker.load(ordering: .acquiring), !state.isClosed else { return }
        switch state.activity {
        case .lingering: return drainWhileLingering()
        case .streaming: return handleStreamEvent(event)
        case .awaitingMemory, .awaitingWrites: return
        case .other: break
        }
        if hasPendingOutput {
            guard flush() else { return close() }
            if hasPendingOutput { return proceed(.awaitOutput) }
            return proceed(afterWrite())
        }
        proceed(readAndParse())
    }

    /// Someone scheduled this connection (see `EventLoop.schedule`): its body memory may
    /// have been granted, its upload's writes have caught up, a stream's producer has
    /// written, or a worker handed it back after the stop had begun (and the stop's sweep
    /// of idle connections had passed it by).
    func handleScheduled() {
        guard !state.isClosed else { return }
        switch state.activity {
        case .awaitingMemory:
            if core.isStopping { state.closeAfterWrite = true }
            proceed(reserveBodyMemory() ?? nextStep())
        case .awaitingWrites:
            if core.isStopping { state.closeAfterWrite = true }
            proceed(state.writesCaughtUp() ? complete() : readAndParse())
        case .streaming:
            if core.isStopping { return endStreamForShutdown() }
            pumpStream()
        case .lingering, .other:
            // Nothing after this: it may hand the connection to a worker.
            if core.isStopping { beginShutdown() }
        }
    }

    /// Reads and drops what the client still sends after our last answer, but not without
    /// end: past `ConnectionState.maxLingerBytes` the connection just closes.
    private func drainWhileLingering() {
        let buffer = loop.readBuffer
        for _ in 0..<Self.lingerReadsPerEvent {
            switch Socket.read(socket.fd, into: buffer) {
            case .transferred(let count):
                if state.lingered(count) { return close() }
            case .wouldBlock: return proceed(.awaitInput)
            case .closed: return close()
            }
        }
        proceed(.awaitInput)
    }

    private static let lingerReadsPerEvent = 4

    // MARK: Whoever owns it

    /// Acts on a step. A request goes to a worker unless it may run on the loop, or we are
    /// a worker already (then it owns the connection and carries on).
    func proceed(_ step: Step, onWorker: Bool = false) {
        switch step {
        case .handle(let exchange):
            if onWorker || exchange.runsOnEventLoop { return serve(exchange, onWorker: onWorker) }
            ownedByWorker.store(true, ordering: .releasing)
            (exchange.coalesces ? core.coalescingWorkers : core.workers).submit { [self] waited in
                let tooLate = waited > core.configuration.maxQueueWait.nanoseconds
                serve(exchange, onWorker: true, refuseAsBusy: tooLate)
            }
        case .admit(let admission):
            ownedByWorker.store(true, ordering: .releasing)
            let coalesces = if case .found(let route, _) = state.request?.match { route.coalesces } else { false }
            (coalesces ? core.coalescingWorkers : core.workers).submit { [self] waited in
                proceed(admit(with: admission, waited: waited), onWorker: true)
            }
        case .awaitInput:
            if state.inputClosed { return close() }
            parser.releaseMemoryIfDrained()
            release(.readable, onWorker: onWorker)
        case .awaitOutput:
            release(.writable, onWorker: onWorker)
        case .awaitMemory, .awaitWrites:
            release(nil, onWorker: onWorker)
        case .stream:
            release(streamInterest, onWorker: onWorker)
            // Writes made while a worker still held the connection found it not the loop's;
            // the loop looks again now that it is (and takes the stream over from there).
            if onWorker { loop.schedule(id) } else { pumpStream() }
        case .linger:
            shutdown(socket.fd, Int32(SHUT_WR))
            state.linger(now: Self.now())
            if state.inputClosed { return close() }
            release(.readable, onWorker: onWorker)
        case .close:
            close()
        }
    }

    /// The handler wants the heavy lane: a heavy-lane thread takes the connection over and
    /// runs it again, or answers 503 if it waited past `heavyQueueWait`. The request stays
    /// in flight (a stop waits for it) and holds its body memory until then.
    func moveToHeavyLane(_ exchange: ServerCore.Exchange, onWorker: Bool) {
        var moved = exchange
        moved.lane = .heavy
        let heavy = moved
        if !onWorker { ownedByWorker.store(true, ordering: .releasing) }
        core.heavyWorkers.submit { [self] waited in
            let tooLate = waited > core.configuration.heavyQueueWait.nanoseconds
            serve(heavy, onWorker: true, refuseAsBusy: tooLate)
        }
    }

    /// On a worker: the route's admission decides on the head; a refusal is the answer
    /// (the body is never read), and so is a wait for a worker past `maxQueueWait`.
    private func admit(with admission: Admission, waited: UInt64) -> Step {
        guard let request = state.request, case .found(let route, _) = request.match else { return .close }
        if waited > core.configuration.maxQueueWait.nanoseconds {
            return refuse(core.busyError)
        }
        do {
            return admitted(try admission.admit(request.head, remoteAddress: request.clientAddress))
        } catch {
            let requestID = RequestID.from(request.head.headers["X-Request-Id"])
            return refuse(core.httpError(for: error, route: route.pattern, requestID: requestID))
        }
    }

    /// Gives the connection (back) to the loop, watching for `interest` (nil: watching
    /// nothing until the loop is scheduled to look at it). After the flag is down this
    /// thread must not touch the connection again — not even to close it if re-arming
    /// fails: that only happens when a stop has already closed it.
    private func release(_ interest: PollInterest?, onWorker: Bool) {
        // Sequentially consistent, like the stop's flag: either the stop's sweep sees this
        // connection as the loop's, or this thread sees the stop (and schedules a look).
        ownedByWorker.store(false, ordering: .sequentiallyConsistent)
        if let interest { loop.poller.rearm(socket.fd, token: id, interest: interest) }
        // A wake-up meant for the loop may have come while the worker held it.
        if onWorker && (interest == nil || core.isStopping) { loop.schedule(id) }
    }

    // MARK: Deadlines, stopping and closing (by the owner)

    func checkDeadline(now: UInt64) {
        switch state.deadline(now: now, bodyBytesReceived: parser.bodyBytesReceived) {
        case .none: break
        case .close: close()
        case .refuse(let error): proceed(refuse(error))
        }
    }

    /// A stop: what is idle closes now, a stream ends now, a request in flight (its head
    /// has arrived) is read to its end and answered with `Connection: close`.
    func beginShutdown() {
        switch state.beginShutdown() {
        case .readWaitingHead:
            let step = readAndParse()
            if state.shutdownAfterReading() { return close() }
            proceed(step)
        case .endStream:
            endStreamForShutdown()
        case .carryOn:
            break
        }
    }

    /// The grace period is over and a worker still holds this connection: cut the socket
    /// so the client learns now; the worker closes the descriptor when it comes back.
    func cutOff() {
        socket.cutOff()
    }

    func close() {
        guard !state.isClosed else { return }
        perform(state.close())
        pendingFile = nil
        if let open = stream {
            stream = nil
            open.writer.markClosed()
        }
        ownedByWorker.store(false, ordering: .releasing)
        loop.forget(socket.fd, id: id)
        socket.close()
        core.connectionClosed()
        if let countedAs { core.connectionsPerAddress.release(countedAs) }
    }
}
