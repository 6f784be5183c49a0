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
/// moves. The request side (parsing, bodies) and the response side (bytes, files, streams)
/// live in the two extensions beside this file.
final class HTTPConnection: @unchecked Sendable {
    enum Phase {
        /// Between requests, nothing of the next one received. `isNew`: the connection has
        /// sent nothing yet, so the head deadline runs from `since` (when it opened).
        case idle(since: UInt64, isNew: Bool)
        case readingHead(deadline: UInt64)
        /// The head is in; the body waits for memory from the body budget (nothing is read).
        case awaitingMemory(since: UInt64)
        case readingBody(since: UInt64)
        /// A worker decides on the request from its head (`Admission`); nothing is read.
        case admitting
        /// A worker has the request.
        case handling
        case writing(lastProgress: UInt64)
        /// A response stream is open: its producer's writes arrive through the loop.
        case streaming
        /// The last answer is out and our side is shut; unread input is drained so that
        /// closing does not reset the connection under an answer the client has yet to read.
        case lingering(since: UInt64)
    }

    /// What the owner does next.
    enum Step {
        case handle(ServerCore.Exchange)
        /// The current request's head goes to a worker for admission before its body is read.
        case admit(Admission)
        case awaitInput
        case awaitOutput
        case awaitMemory
        case stream
        case linger
        case close
    }

    /// The request whose head has arrived and whose answer is not yet out.
    struct CurrentRequest {
        let head: RequestHead
        let match: Router.Match
        let receivedAt: UInt64
        var consumer: (any BodyConsumer)?
        /// What the consumer asked of the body budget, and its claim once made.
        var memoryWanted = 0
        var memoryTicket: BodyMemoryBudget.Ticket?
        /// The route takes no body, and the body is already here: it is passed over so the
        /// connection can go on.
        var skippingBody = false
        /// What admission returned, when it ran before the body was read.
        var admitted: (any Sendable)?
    }

    let id: UInt64
    let socket: ConnectionSocket
    /// Strong: a worker may finish with this connection after the server has stopped.
    let loop: EventLoop
    let core: ServerCore
    let remoteAddress: String
    private let ownedByWorker = Atomic<Bool>(false)

    // Touched only by the current owner.
    var parser: RequestParser
    var phase: Phase
    var current: CurrentRequest?
    var requestInFlight = false
    /// A final answer (not `100 Continue`) is queued: when it is out, the request is done.
    var answerQueued = false
    var closeAfterWrite = false
    /// Requests handed to a handler so far, against `maxRequestsPerConnection`.
    var requestsDispatched = 0
    var inputClosed = false
    var closed = false
    var outbox: [UInt8] = []
    var outboxSent = 0
    var lingerDrained = 0
    var pendingFile: (body: FileBody, offset: Int)?
    var stream: OpenStream?

    init(id: UInt64, fd: Int32, remoteAddress: String, loop: EventLoop) {
        self.id = id
        self.socket = ConnectionSocket(fd: fd)
        self.remoteAddress = remoteAddress
        self.loop = loop
        self.core = loop.core
        self.parser = RequestParser(limits: loop.core.configuration.limits)
        self.phase = .idle(since: Self.now(), isNew: true)
    }

    var isOwnedByWorker: Bool { ownedByWorker.load(ordering: .sequentiallyConsistent) }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    // MARK: On the loop

    /// A poller event for this connection (now disarmed, and the loop's).
    func handle(_ event: PollEvent) {
        // The acquire pairs with the worker's release in `release(_:onWorker:)`: the kernel
        // orders re-arm before event, but only this load makes the worker's writes ours.
        guard !ownedByWorker.load(ordering: .acquiring), !closed else { return }
        switch phase {
        case .lingering: return drainWhileLingering()
        case .streaming: return handleStreamEvent(event)
        case .awaitingMemory: return
        default: break
        }
        if hasPendingOutput {
            guard flush() else { return close() }
            if hasPendingOutput { return proceed(.awaitOutput) }
            return proceed(afterWrite())
        }
        proceed(readAndParse())
    }

    /// Someone scheduled this connection (see `EventLoop.schedule`): its body memory may
    /// have been granted, a stream's producer has written, or a worker handed it back after
    /// the stop had begun (and the stop's sweep of idle connections had passed it by).
    func handleScheduled() {
        guard !closed else { return }
        switch phase {
        case .awaitingMemory:
            if core.isStopping { closeAfterWrite = true }
            proceed(reserveBodyMemory() ?? nextStep())
        case .streaming:
            if core.isStopping { return endStreamForShutdown() }
            pumpStream()
        default:
            // Nothing after this: it may hand the connection to a worker.
            if core.isStopping { beginShutdown() }
        }
    }

    /// Reads and drops what the client still sends after our last answer, but not without
    /// end: past `maxLingerBytes` the connection just closes.
    private func drainWhileLingering() {
        let buffer = loop.readBuffer
        for _ in 0..<Self.lingerReadsPerEvent {
            switch Socket.read(socket.fd, into: buffer) {
            case .transferred(let count):
                lingerDrained += count
                if lingerDrained > Self.maxLingerBytes { return close() }
            case .wouldBlock: return proceed(.awaitInput)
            case .closed: return close()
            }
        }
        proceed(.awaitInput)
    }

    private static let lingerReadsPerEvent = 4
    private static let maxLingerBytes = 1024 * 1024

    // MARK: Whoever owns it

    /// Acts on a step. A request goes to a worker unless it may run on the loop, or we are
    /// a worker already (then it owns the connection and carries on).
    func proceed(_ step: Step, onWorker: Bool = false) {
        switch step {
        case .handle(let exchange):
            if onWorker || exchange.runsOnEventLoop { return serve(exchange, onWorker: onWorker) }
            ownedByWorker.store(true, ordering: .releasing)
            core.workers.submit { [self] waited in
                let tooLate = waited > core.configuration.maxQueueWait.nanoseconds
                serve(exchange, onWorker: true, refuseAsBusy: tooLate)
            }
        case .admit(let admission):
            ownedByWorker.store(true, ordering: .releasing)
            core.workers.submit { [self] waited in
                proceed(admit(with: admission, waited: waited), onWorker: true)
            }
        case .awaitInput:
            if inputClosed { return close() }
            parser.releaseMemoryIfDrained()
            release(.readable, onWorker: onWorker)
        case .awaitOutput:
            release(.writable, onWorker: onWorker)
        case .awaitMemory:
            release(nil, onWorker: onWorker)
        case .stream:
            release(streamInterest, onWorker: onWorker)
            // Writes made while a worker still held the connection found it not the loop's;
            // the loop looks again now that it is (and takes the stream over from there).
            if onWorker { loop.schedule(id) } else { pumpStream() }
        case .linger:
            shutdown(socket.fd, Int32(SHUT_WR))
            phase = .lingering(since: Self.now())
            if inputClosed { return close() }
            release(.readable, onWorker: onWorker)
        case .close:
            close()
        }
    }

    /// On a worker: the route's admission decides on the head; a refusal is the answer
    /// (the body is never read), and so is a wait for a worker past `maxQueueWait`.
    private func admit(with admission: Admission, waited: UInt64) -> Step {
        guard let request = current, case .found(let route, _) = request.match else { return .close }
        if waited > core.configuration.maxQueueWait.nanoseconds {
            return refuse(core.busyError)
        }
        do {
            return admitted(try admission.admit(request.head, remoteAddress: remoteAddress))
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
        guard !closed else { return }
        let timeouts = core.timeouts
        switch phase {
        case .idle(let since, let isNew):
            if now >= since + (isNew ? timeouts.header : timeouts.idle) { close() }
        case .readingHead(let deadline):
            if now >= deadline {
                proceed(refuse(HTTPError(.requestTimeout, message: "request head not received in time")))
            }
        case .readingBody(let since):
            if timeouts.isBodyTooSlow(start: since, received: parser.bodyBytesReceived, now: now) {
                proceed(refuse(HTTPError(.requestTimeout, message: "request body arrived too slowly")))
            }
        case .writing(let lastProgress):
            if now >= lastProgress + timeouts.idle { close() }
        case .lingering(let since):
            if now >= since + timeouts.linger { close() }
        case .awaitingMemory(let since):
            // Others hold the budget with bodies of their own: a clear answer, not a hang.
            if now >= since + timeouts.bodyGrace {
                proceed(refuse(HTTPError(.serviceUnavailable, message: "the server is busy receiving other uploads; try again shortly",
                                         headers: HTTPHeaders([("Retry-After", "1")]))))
            }
        case .admitting, .handling, .streaming:
            break
        }
    }

    /// A stop: what is idle closes now, a stream ends now, a request in flight (its head
    /// has arrived) is read to its end and answered with `Connection: close`.
    func beginShutdown() {
        guard !closed else { return }
        switch phase {
        case .idle, .readingHead:
            // A head may be waiting in the socket that the loop has not read yet: the client
            // sent it before the stop, so it is a request in flight like any other.
            let step = readAndParse()
            switch phase {
            case .idle, .readingHead: close()
            default:
                closeAfterWrite = true
                proceed(step)
            }
        case .streaming: endStreamForShutdown()
        case .awaitingMemory, .readingBody, .writing: closeAfterWrite = true
        case .admitting, .handling, .lingering: break
        }
    }

    /// The grace period is over and a worker still holds this connection: cut the socket
    /// so the client learns now; the worker closes the descriptor when it comes back.
    func cutOff() {
        socket.cutOff()
    }

    func close() {
        guard !closed else { return }
        closed = true
        finishRequest()
        pendingFile = nil
        if let open = stream {
            stream = nil
            open.writer.markClosed()
        }
        ownedByWorker.store(false, ordering: .releasing)
        loop.forget(socket.fd, id: id)
        socket.close()
        core.connectionClosed()
    }
}
