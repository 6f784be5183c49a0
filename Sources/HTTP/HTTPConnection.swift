import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// One client connection: reads into the parser, hands complete requests to the workers
/// one at a time (pipelined requests wait in the parser, so answers keep their order),
/// writes responses, and enforces the timeouts. Confined to its `IOLoop`'s queue.
final class HTTPConnection: @unchecked Sendable {
    private enum Phase {
        /// Between requests; `firstRequest` marks a new connection that has sent nothing yet.
        case waiting(since: UInt64, firstRequest: Bool)
        case readingHead(since: UInt64)
        case readingBody(lastProgress: UInt64)
        /// A worker has the request.
        case handling
        case writing(lastProgress: UInt64)
        /// The last response is out and our side is shut; unread input is drained so that
        /// closing does not reset the connection under a response the client has yet to read.
        case lingering(since: UInt64)
    }

    private let fd: Int32
    private let loop: IOLoop
    private let core: ServerCore
    let remoteAddress: String

    private var parser: RequestParser
    private var phase: Phase
    private var pending: (head: RequestHead, match: Router.Match, receivedAt: UInt64)?
    private var inFlight = false
    private var closeAfterWrite = false
    private var inputClosed = false
    private var closed = false

    private var outbox: [UInt8] = []
    private var outboxSent = 0

    private var readSource: DispatchSourceRead?
    private var readSuspended = false
    private var writeSource: DispatchSourceWrite?
    private var writeSourceActive = false
    private var sourcesToCancel = 0

    init(fd: Int32, remoteAddress: String, loop: IOLoop, core: ServerCore) {
        self.fd = fd
        self.remoteAddress = remoteAddress
        self.loop = loop
        self.core = core
        self.parser = RequestParser(limits: core.configuration.limits)
        self.phase = .waiting(since: DispatchTime.now().uptimeNanoseconds, firstRequest: true)
    }

    func start() {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: loop.queue)
        source.setEventHandler { [self] in readAvailable() }
        source.setCancelHandler { [self] in sourceCancelled() }
        readSource = source
        sourcesToCancel += 1
        source.resume()
    }

    // MARK: Reading

    private func readAvailable() {
        guard !closed else { return }
        let buffer = loop.readBuffer
        reading: while true {
            switch Socket.read(fd, into: buffer) {
            case .transferred(let count):
                if case .lingering = phase { continue reading }
                parser.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                if count < buffer.count { break reading }
            case .wouldBlock:
                break reading
            case .closed:
                if case .lingering = phase { return close() }
                inputClosed = true
                suspendReading()
                break reading
            }
        }
        processInput()
    }

    private func processInput() {
        while !closed && !inFlight && !closeAfterWrite {
            let event: RequestParser.Event
            do {
                event = try parser.next()
            } catch {
                return refuse(HTTPError(error), method: pending?.head.method, target: pending?.head.target)
            }
            switch event {
            case .needMore:
                noteProgress()
                if inputClosed { close() }
                return
            case .head(let head):
                let match = core.router.match(method: head.method, path: head.path)
                var limit = core.configuration.limits.defaultBodyLimit
                if case .found(let route, _) = match { limit = route.bodyLimit }
                parser.bodyLimit = limit
                pending = (head, match, DispatchTime.now().uptimeNanoseconds)
                phase = .readingBody(lastProgress: DispatchTime.now().uptimeNanoseconds)
                if head.expectsContinue, head.hasBody, !Self.declaredLength(of: head, exceeds: limit) {
                    queueWrite(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                }
            case .end(let body):
                guard let (head, match, receivedAt) = pending else { return }
                pending = nil
                dispatch(head: head, body: body, match: match, receivedAt: receivedAt)
                return
            }
        }
    }

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

    // MARK: Handling

    private func dispatch(head: RequestHead, body: [UInt8], match: Router.Match, receivedAt: UInt64) {
        inFlight = true
        phase = .handling
        suspendReading()
        core.requestStarted()
        let exchange = ServerCore.Exchange(head: head, body: body, match: match, remoteAddress: remoteAddress,
                                           receivedAt: receivedAt)
        core.workers.submit { [self, core, loop] in
            let answer = core.respond(to: exchange)
            loop.queue.async { self.deliver(answer) }
        }
    }

    private func deliver(_ answer: ServerCore.Answer) {
        // A connection closed meanwhile has already counted its request as finished.
        guard !closed else { return }
        if !answer.keepAlive { closeAfterWrite = true }
        queueWrite(answer.bytes)
    }

    /// Answers a request we will not handle (bad framing, limits, timeout) and closes.
    private func refuse(_ error: HTTPError, method: HTTPMethod?, target: String?) {
        closeAfterWrite = true
        suspendReading()
        let bytes = core.render(error, method: method, target: target, remoteAddress: remoteAddress)
        queueWrite(bytes)
    }

    // MARK: Writing

    private func queueWrite(_ bytes: [UInt8]) {
        if outbox.isEmpty {
            outbox = bytes
            outboxSent = 0
        } else {
            outbox.append(contentsOf: bytes)
        }
        if case .handling = phase { phase = .writing(lastProgress: DispatchTime.now().uptimeNanoseconds) }
        flush()
    }

    private func flush() {
        while outboxSent < outbox.count {
            let result = outbox.withUnsafeBytes { Socket.write(fd, UnsafeRawBufferPointer(rebasing: $0[outboxSent...])) }
            switch result {
            case .transferred(let count):
                outboxSent += count
                if case .writing = phase { phase = .writing(lastProgress: DispatchTime.now().uptimeNanoseconds) }
            case .wouldBlock:
                return awaitWritable()
            case .closed:
                return close()
            }
        }
        outbox = []
        outboxSent = 0
        if writeSourceActive {
            writeSource?.suspend()
            writeSourceActive = false
        }
        writeCompleted()
    }

    private func awaitWritable() {
        if writeSource == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: loop.queue)
            source.setEventHandler { [self] in if !closed { flush() } }
            source.setCancelHandler { [self] in sourceCancelled() }
            writeSource = source
            sourcesToCancel += 1
            writeSourceActive = true
            source.resume()
        } else if !writeSourceActive {
            writeSourceActive = true
            writeSource?.resume()
        }
    }

    private func writeCompleted() {
        let wasInFlight = inFlight
        if wasInFlight {
            inFlight = false
            core.requestFinished()
        }
        if closeAfterWrite { return linger() }
        guard wasInFlight else { return }
        phase = .waiting(since: DispatchTime.now().uptimeNanoseconds, firstRequest: false)
        if core.isStopping && parser.isIdle { return close() }
        resumeReading()
        processInput()
    }

    // MARK: Timeouts and closing

    func checkDeadline(now: UInt64) {
        guard !closed else { return }
        let header = core.configuration.headerTimeout.nanoseconds
        let idle = core.configuration.idleTimeout.nanoseconds
        switch phase {
        case .waiting(let since, let first):
            if now >= since + (first ? header : idle) { close() }
        case .readingHead(let since):
            if now >= since + header {
                refuse(HTTPError(.requestTimeout, message: "request head not received in time"), method: nil, target: nil)
            }
        case .readingBody(let lastProgress):
            if now >= lastProgress + idle {
                refuse(HTTPError(.requestTimeout, message: "request body stalled"), method: pending?.head.method,
                       target: pending?.head.target)
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

    /// Called by a stop: idle connections close now, busy ones after their answer.
    func beginShutdown() {
        guard !closed else { return }
        if inFlight {
            closeAfterWrite = true
        } else if case .lingering = phase {
            return
        } else {
            close()
        }
    }

    private func linger() {
        shutdown(fd, Int32(SHUT_WR))
        phase = .lingering(since: DispatchTime.now().uptimeNanoseconds)
        if inputClosed { return close() }
        resumeReading()
    }

    func close() {
        guard !closed else { return }
        closed = true
        if inFlight {
            inFlight = false
            core.requestFinished()
        }
        loop.remove(self)
        core.connectionClosed()
        if let writeSource {
            if !writeSourceActive { writeSource.resume() }
            writeSource.cancel()
        }
        if let readSource {
            if readSuspended { readSource.resume() }
            readSource.cancel()
        }
    }

    /// The descriptor is closed only once no source watches it any more.
    private func sourceCancelled() {
        sourcesToCancel -= 1
        if sourcesToCancel == 0 {
            Glibc.close(fd)
            readSource = nil
            writeSource = nil
        }
    }

    private func suspendReading() {
        guard !readSuspended, let readSource else { return }
        readSource.suspend()
        readSuspended = true
    }

    private func resumeReading() {
        guard readSuspended, !inputClosed, let readSource else { return }
        readSource.resume()
        readSuspended = false
    }
}
