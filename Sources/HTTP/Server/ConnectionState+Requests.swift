/// A request's way through the state machine: head, admission, body memory, body, handler,
/// answer; and what comes after the answer.
extension ConnectionState {
    enum HeadAction {
        /// No body: parse on (to the end of the request).
        case parse
        /// The body is still to come and the route decides from the head first, on a worker.
        case admit(Admission)
        /// Pick the body's consumer (`chooseBody`).
        case prepareBody
    }

    enum BodyAction {
        /// The body is read into the consumer, within `limit`, once memory is claimed.
        case claimMemory(limit: Int)
        /// Nobody takes the body, and all of it is here: passed over, `length` bytes.
        case skip(length: Int)
        /// Nobody takes the body and it is still to come: answered now, then closed.
        case dispatchWithoutBody
        case refuse(HTTPError)
    }

    enum MemoryAction {
        /// The request has no body consumer: parse on.
        case none
        /// Memory is granted: read the body (after `100 Continue` if the client waits for it).
        case readBody(sendContinue: Bool)
        /// Nothing is read until the budget grants the claim.
        case wait
    }

    enum NextStep {
        case parse
        case linger
        case close
    }

    /// The parser has seen a first byte of a head: the head's clock starts (on a new
    /// connection it started when the connection opened).
    mutating func headBegan(now: UInt64) {
        guard case .idle(let since, let isNew) = phase else { return }
        phase = .readingHead(deadline: timeouts.headDeadline(connectionOpenedAt: isNew ? since : nil, firstByte: now))
    }

    /// The head is complete: the request is in flight from now on. `bodyIsBuffered`: the
    /// whole body is in the parser's buffer already, so admission (if any) runs with the
    /// handler rather than costing a hand-off of its own.
    mutating func headReceived(_ head: RequestHead, clientAddress: String, match: Router.Match, bodyIsBuffered: Bool,
                               now: UInt64) -> HeadAction {
        let request = Request(head: head, clientAddress: clientAddress, match: match, receivedAt: now)
        if head.hasBody, !bodyIsBuffered, case .found(let route, _) = match, let admission = route.admission {
            phase = .admitting(request)
            return .admit(admission)
        }
        phase = .readingBody(request, since: now)
        return head.hasBody ? .prepareBody : .parse
    }

    /// The route's admission let the request in: its body may be read.
    mutating func admitted(_ value: any Sendable, now: UInt64) {
        guard case .admitting(var request) = phase else { return }
        request.admitted = value
        phase = .readingBody(request, since: now)
    }

    /// The route's consumer for the body (nil: it takes none); `buffered`: bytes of the
    /// body already in the parser's buffer.
    mutating func chooseBody(_ consumer: (any BodyConsumer)?, buffered: Int) -> BodyAction {
        guard let head = request?.head else { return .dispatchWithoutBody }
        var declaredLength: Int?
        if case .contentLength(let length) = head.framing { declaredLength = length }
        guard var consumer else {
            guard let length = declaredLength, buffered >= length else { return .dispatchWithoutBody }
            try? updateRequest { $0.skippingBody = true }
            return .skip(length: length)
        }
        if let length = declaredLength, length > consumer.limit { return .refuse(HTTPError(HTTPParseError.payloadTooLarge)) }
        let wanted = consumer.prepare(declaredLength: declaredLength)
        try? updateRequest { request in
            request.memoryWanted = wanted
            request.consumer = consumer
        }
        return .claimMemory(limit: consumer.limit)
    }

    /// Claims the body's memory (`claim` asks the budget), or looks again at a claim made
    /// before; waits without reading while it is not granted.
    mutating func reserveMemory(now: UInt64, claim: (Int) -> BodyMemoryBudget.Ticket) -> MemoryAction {
        guard let request, request.consumer != nil else { return .none }
        let ticket = request.memoryTicket ?? claim(request.memoryWanted)
        try? updateRequest { $0.memoryTicket = ticket }
        guard ticket.isGranted else {
            if case .readingBody(let request, _) = phase { phase = .awaitingMemory(request, since: now) }
            return .wait
        }
        // The body clock starts when we are ready to read it, not while we made it wait.
        if let request = self.request { phase = .readingBody(request, since: now) }
        return .readBody(sendContinue: request.head.expectsContinue)
    }

    /// The next piece of the body, for its consumer (or passed over).
    mutating func consume(_ piece: ArraySlice<UInt8>) throws(HTTPError) {
        try updateRequest { request throws(HTTPError) in
            guard !request.skippingBody else { return }
            try request.consumer?.consume(piece)
        }
    }

    /// Whether the body's consumer is behind with work it does off this thread (an
    /// upload's disk writes): if so nothing more is read until `wake`, then
    /// `writesCaughtUp`. `untilDone`: the body has ended and must wait for all of it.
    mutating func bodyIsBehind(untilDone: Bool, wake: @escaping @Sendable () -> Void) -> Bool {
        guard case .readingBody = phase else { return false }
        var behind = false
        try? updateRequest { request in
            guard !request.skippingBody else { return }
            behind = request.consumer?.isBehind(untilDone: untilDone, wake: wake) ?? false
            request.waitsForWrites = behind
            if untilDone { request.bodyEnded = true }
        }
        return behind
    }

    /// The consumer's writes caught up: reading (or, if the body had ended, finishing) goes
    /// on. Returns whether the body had ended.
    mutating func writesCaughtUp() -> Bool {
        var bodyEnded = false
        try? updateRequest { request in
            request.waitsForWrites = false
            bodyEnded = request.bodyEnded
        }
        return bodyEnded
    }

    /// The body has ended: what the handler receives. The consumer goes (its temporary
    /// files with it, if it fails) before the caller answers.
    mutating func finishBody() throws(HTTPError) -> RequestBody {
        var body = RequestBody.empty
        try updateRequest { request throws(HTTPError) in
            guard var consumer = request.consumer else { return }
            request.consumer = nil
            body = try consumer.finish()
        }
        return body
    }

    /// The request goes to its handler. `closesConnection`: its body was left unread.
    mutating func dispatch(body: RequestBody, closesConnection: Bool) -> ServerCore.Exchange? {
        guard let request else { return nil }
        phase = .handling(request)
        requestsDispatched += 1
        let isLast = closesConnection || requestsDispatched >= maxRequestsPerConnection
        if isLast { closeAfterWrite = true }
        return ServerCore.Exchange(head: request.head, body: body, match: request.match, clientAddress: request.clientAddress,
                                   receivedAt: request.receivedAt, closesConnection: isLast, admitted: request.admitted)
    }

    /// A request (or a head) is refused: its answer goes out, then the connection closes.
    /// Returns the request refused (nil: its head was the trouble) and its memory claim,
    /// to give back before the answer goes out (a waiting client may see it at once).
    mutating func refuse(now: UInt64) -> (request: Request?, ticket: BodyMemoryBudget.Ticket?) {
        closeAfterWrite = true
        var request = self.request
        let ticket = request?.memoryTicket
        request?.consumer = nil
        request?.memoryTicket = nil
        phase = .writing(request, lastProgress: now)
        return (request, ticket)
    }

    /// The handler's answer is queued.
    mutating func answerQueued(keepAlive: Bool, now: UInt64) {
        if !keepAlive { closeAfterWrite = true }
        phase = .writing(request, lastProgress: now)
    }

    /// Some of the answer went out: the stall clock starts again.
    mutating func wroteSome(now: UInt64) {
        if case .writing(let request, _) = phase { phase = .writing(request, lastProgress: now) }
    }

    /// Everything queued is out: the answered request is finished; then the connection
    /// lingers (its last answer), closes (a stop, between requests) or parses on.
    mutating func outputDrained(now: UInt64, stopping: Bool, parserIdle: Bool) -> (Finished, NextStep) {
        var finished = Finished()
        if case .writing(let request, _) = phase {
            finished = Finished(ticket: request?.memoryTicket, requestEnded: request != nil)
            phase = .idle(since: now, isNew: false)
        }
        // Only once the request is answered: a `100 Continue` going out is not the end.
        if closeAfterWrite && request == nil { return (finished, .linger) }
        if stopping && parserIdle { return (finished, .close) }
        return (finished, .parse)
    }

    mutating func streamStarted() {
        phase = .streaming(request)
    }

    /// The loop has taken the stream over: its request no longer holds up a stop.
    mutating func streamTakenOver() -> Finished {
        guard case .streaming(let request?) = phase else { return Finished() }
        phase = .streaming(nil)
        return Finished(ticket: request.memoryTicket, requestEnded: true)
    }

    mutating func streamEnded(now: UInt64) {
        phase = .idle(since: now, isNew: false)
    }

    mutating func linger(now: UInt64) {
        phase = .lingering(since: now, drained: 0)
    }

    /// `count` more bytes were drained while lingering; true once past `maxLingerBytes`:
    /// the connection just closes.
    mutating func lingered(_ count: Int) -> Bool {
        guard case .lingering(let since, let drained) = phase else { return false }
        phase = .lingering(since: since, drained: drained + count)
        return drained + count > Self.maxLingerBytes
    }

    static let maxLingerBytes = 1024 * 1024
}
