import CLinux
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One client connection. Requests are handled one at a time (pipelined ones wait in the
/// parser), so answers keep their order. Whoever owns the connection — its loop or, while
/// a request is handled, a worker — runs the same steps; see `EventLoop` for how
/// ownership moves.
final class HTTPConnection: @unchecked Sendable {
    private enum Phase {
        /// Between requests; `firstRequest` marks a new connection that has sent nothing yet.
        case waiting(since: UInt64, firstRequest: Bool)
        case readingHead(since: UInt64)
        case readingBody(lastProgress: UInt64)
        /// A worker has the request.
        case handling
        case writing(lastProgress: UInt64)
        /// The last answer is out and our side is shut; unread input is drained so that
        /// closing does not reset the connection under an answer the client has yet to read.
        case lingering(since: UInt64)
    }

    /// What the owner does next.
    private enum Step {
        case handle(ServerCore.Exchange)
        case awaitInput
        case awaitOutput
        case linger
        case close
    }

    let id: UInt64
    private let fd: Int32
    /// Strong: a worker may finish with this connection after the server has stopped.
    private let loop: EventLoop
    private let core: ServerCore
    let remoteAddress: String
    private let ownedByWorker = Atomic<Bool>(false)

    // Touched only by the current owner.
    private var parser: RequestParser
    private var phase: Phase
    private var pending: (head: RequestHead, match: Router.Match, receivedAt: UInt64)?
    private var inFlight = false
    private var closeAfterWrite = false
    private var inputClosed = false
    private var closed = false
    private var outbox: [UInt8] = []
    private var outboxSent = 0

    init(id: UInt64, fd: Int32, remoteAddress: String, loop: EventLoop) {
        self.id = id
        self.fd = fd
        self.remoteAddress = remoteAddress
        self.loop = loop
        self.core = loop.core
        self.parser = RequestParser(limits: loop.core.configuration.limits)
        self.phase = .waiting(since: DispatchTime.now().uptimeNanoseconds, firstRequest: true)
    }

    var isOwnedByWorker: Bool { ownedByWorker.load(ordering: .acquiring) }

    // MARK: On the loop

    /// An epoll event for this connection (now disarmed, and the loop's).
    func handle(events: UInt32) {
        // The acquire pairs with the worker's release in `release(forOutput:)`: the kernel
        // orders re-arm before event, but only this load makes the worker's writes ours.
        guard !ownedByWorker.load(ordering: .acquiring), !closed else { return }
        if case .lingering = phase { return drainWhileLingering() }
        if !outbox.isEmpty {
            guard flush() else { return close() }
            if !outbox.isEmpty { return proceed(.awaitOutput) }
            return proceed(afterWrite())
        }
        readAvailable()
        proceed(nextStep())
    }

    /// Reads what has arrived, but parses before buffering more than `maxUnparsedBytes`:
    /// a client streaming fast must meet the parser's limits, not our memory. A one-shot
    /// re-arm brings the loop back for the rest.
    private func readAvailable() {
        let buffer = loop.readBuffer
        while true {
            switch Socket.read(fd, into: buffer) {
            case .transferred(let count):
                parser.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                if count < buffer.count || parser.bufferedByteCount >= Self.maxUnparsedBytes { return }
            case .wouldBlock:
                return
            case .closed:
                inputClosed = true
                return
            }
        }
    }

    private func drainWhileLingering() {
        let buffer = loop.readBuffer
        while true {
            switch Socket.read(fd, into: buffer) {
            case .transferred: continue
            case .wouldBlock: return proceed(.awaitInput)
            case .closed: return close()
            }
        }
    }

    // MARK: Whoever owns it

    /// Acts on a step. A request goes to a worker unless it may run on the loop, or we are
    /// a worker already (then it owns the connection and carries on).
    private func proceed(_ step: Step, onWorker: Bool = false) {
        switch step {
        case .handle(let exchange):
            if onWorker || exchange.runsOnEventLoop { return serve(exchange, onWorker: onWorker) }
            ownedByWorker.store(true, ordering: .releasing)
            core.workers.submit { [self] waited in
                let tooLate = waited > core.configuration.maxQueueWait.nanoseconds
                serve(exchange, onWorker: true, refuseAsBusy: tooLate)
            }
        case .awaitInput:
            if inputClosed { return close() }
            release(forOutput: false)
        case .awaitOutput:
            release(forOutput: true)
        case .linger:
            shutdown(fd, Int32(SHUT_WR))
            phase = .lingering(since: DispatchTime.now().uptimeNanoseconds)
            if inputClosed { return close() }
            release(forOutput: false)
        case .close:
            close()
        }
    }

    /// Answers the request, then any pipelined ones this thread may answer too.
    /// `refuseAsBusy`: it waited too long for a worker; say 503 instead of running it.
    private func serve(_ first: ServerCore.Exchange, onWorker: Bool, refuseAsBusy: Bool = false) {
        var exchange = first
        var busy = refuseAsBusy
        while true {
            let answer = busy ? core.respondBusy(to: exchange) : core.respond(to: exchange)
            busy = false
            guard !closed else { return }
            if !answer.keepAlive { closeAfterWrite = true }
            outbox += answer.bytes
            phase = .writing(lastProgress: DispatchTime.now().uptimeNanoseconds)
            guard flush() else { return close() }
            if !outbox.isEmpty { return proceed(.awaitOutput, onWorker: onWorker) }
            let step = afterWrite()
            guard case .handle(let next) = step, onWorker || next.runsOnEventLoop else {
                return proceed(step, onWorker: onWorker)
            }
            exchange = next
        }
    }

    /// The outbox is empty: finish the request it held, then see what comes next.
    private func afterWrite() -> Step {
        if inFlight {
            inFlight = false
            core.requestFinished()
            phase = .waiting(since: DispatchTime.now().uptimeNanoseconds, firstRequest: false)
        }
        if closeAfterWrite { return .linger }
        if core.isStopping && parser.isIdle { return .close }
        return nextStep()
    }

    /// Runs the parser over what has arrived.
    private func nextStep() -> Step {
        while true {
            let event: RequestParser.Event
            do {
                event = try parser.next()
            } catch {
                return refuse(HTTPError(error), method: pending?.head.method, target: pending?.head.target)
            }
            switch event {
            case .needMore:
                noteProgress()
                return .awaitInput
            case .head(let head):
                let match = core.router.match(method: head.method, path: head.path)
                var limit = core.configuration.limits.defaultBodyLimit
                if case .found(let route, _) = match { limit = route.bodyLimit }
                parser.bodyLimit = limit
                let now = DispatchTime.now().uptimeNanoseconds
                pending = (head, match, now)
                phase = .readingBody(lastProgress: now)
                if head.expectsContinue, head.hasBody, !Self.declaredLength(of: head, exceeds: limit) {
                    outbox += Self.continueResponse
                    guard flush() else { return .close }
                    if !outbox.isEmpty { return .awaitOutput }
                }
            case .end(let body):
                guard let (head, match, receivedAt) = pending else { return .close }
                pending = nil
                inFlight = true
                phase = .handling
                core.requestStarted()
                return .handle(ServerCore.Exchange(head: head, body: body, match: match,
                                                   remoteAddress: remoteAddress, receivedAt: receivedAt))
            }
        }
    }

    private static let maxUnparsedBytes = 256 * 1024

    private static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    private static func declaredLength(of head: RequestHead, exceeds limit: Int) -> Bool {
        if case .contentLength(let length) = head.framing { return length > limit }
        return false
    }

    /// Keeps the timeout phase in step with what the parser has seen.
    private func noteProgress() {
        let now = DispatchTime.now().uptimeNanoseconds
        if parser.isReadingBody {
            phase = .readingBody(lastProgress: now)
        } else if !parser.isIdle, case .waiting = phase {
            phase = .readingHead(since: now)
        }
    }

    /// Answers a request we will not handle (bad framing, limits, timeout), then closes.
    private func refuse(_ error: HTTPError, method: HTTPMethod?, target: String?) -> Step {
        closeAfterWrite = true
        outbox += core.render(error, method: method, target: target, remoteAddress: remoteAddress)
        phase = .writing(lastProgress: DispatchTime.now().uptimeNanoseconds)
        guard flush() else { return .close }
        return outbox.isEmpty ? .linger : .awaitOutput
    }

    /// Writes what it can without blocking; false if the connection broke.
    private func flush() -> Bool {
        while outboxSent < outbox.count {
            let result = outbox.withUnsafeBytes { Socket.write(fd, UnsafeRawBufferPointer(rebasing: $0[outboxSent...])) }
            switch result {
            case .transferred(let count):
                outboxSent += count
                if case .writing = phase { phase = .writing(lastProgress: DispatchTime.now().uptimeNanoseconds) }
            case .wouldBlock:
                return true
            case .closed:
                return false
            }
        }
        outbox.removeAll(keepingCapacity: outbox.count <= 64 * 1024)
        outboxSent = 0
        return true
    }

    /// Gives the connection (back) to the loop. After the flag is down this thread must not
    /// touch the connection again — not even to close it if re-arming fails: that only
    /// happens when a stop has already closed it, and a second close could hit a
    /// descriptor number that another socket has reused.
    private func release(forOutput: Bool) {
        ownedByWorker.store(false, ordering: .releasing)
        _ = loop.rearm(fd, id: id, forOutput: forOutput)
    }

    // MARK: Timeouts and closing (by the owner)

    func checkDeadline(now: UInt64) {
        guard !closed else { return }
        let header = core.configuration.headerTimeout.nanoseconds
        let idle = core.configuration.idleTimeout.nanoseconds
        switch phase {
        case .waiting(let since, let first):
            if now >= since + (first ? header : idle) { close() }
        case .readingHead(let since):
            if now >= since + header {
                proceed(refuse(HTTPError(.requestTimeout, message: "request head not received in time"), method: nil, target: nil))
            }
        case .readingBody(let lastProgress):
            if now >= lastProgress + idle {
                proceed(refuse(HTTPError(.requestTimeout, message: "request body stalled"),
                               method: pending?.head.method, target: pending?.head.target))
            }
        case .handling:
            break
        case .writing(let lastProgress):
            if now >= lastProgress + idle { close() }
        case .lingering(let since):
            if now >= since + Self.lingerNanoseconds { close() }
        }
    }

    private static let lingerNanoseconds: UInt64 = 2_000_000_000

    /// A stop: a connection between requests closes now; one mid-answer after it.
    func beginShutdown() {
        guard !closed else { return }
        switch phase {
        case .writing, .lingering: closeAfterWrite = true
        default: close()
        }
    }

    /// The grace period is over and a worker still holds this connection: cut the socket
    /// so the client learns now; the worker closes the descriptor when it comes back.
    func cutOff() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    func close() {
        guard !closed else { return }
        closed = true
        if inFlight {
            inFlight = false
            core.requestFinished()
        }
        ownedByWorker.store(false, ordering: .releasing)
        loop.forget(fd, id: id)
        Glibc.close(fd)
        core.connectionClosed()
    }
}
