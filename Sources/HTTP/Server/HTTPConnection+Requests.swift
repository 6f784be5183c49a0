/// The request side of a connection: reading, parsing, and feeding each body to the
/// consumer its route chose, within the body budget.
extension HTTPConnection {
    /// How many full buffers one event may read before the connection waits its turn again:
    /// a client streaming fast gets its share, not the loop.
    private static let readsPerEvent = 16

    private static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Reads what has arrived and acts on it piece by piece, so a body goes to its consumer
    /// as it comes and the connection holds no more than one read's worth.
    func readAndParse() -> Step {
        let buffer = loop.readBuffer
        for _ in 0..<Self.readsPerEvent {
            switch Socket.read(socket.fd, into: buffer) {
            case .transferred(let count):
                parser.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                let step = nextStep()
                // A short read emptied the socket: no second read to hear EAGAIN.
                guard case .awaitInput = step, count == buffer.count else { return step }
            case .wouldBlock:
                return .awaitInput
            case .closed:
                inputClosed = true
                return .awaitInput
            }
        }
        return .awaitInput
    }

    /// Runs the parser over what has arrived.
    func nextStep() -> Step {
        while true {
            let event: RequestParser.Event
            do {
                event = try parser.next()
            } catch {
                return refuse(HTTPError(error))
            }
            switch event {
            case .needMore:
                noteWaitingForInput()
                return .awaitInput
            case .head(let head):
                if let step = begin(head) { return step }
            case .body(let piece):
                if let step = consume(piece) { return step }
            case .end:
                return complete()
            }
        }
    }

    /// The head has arrived: the request is in flight. A route with an admission whose
    /// body is still to come is decided on first, by a worker (`admitted(_:)` goes on from
    /// there); otherwise picks the body's consumer and reserves its memory. Nil to go on
    /// parsing.
    private func begin(_ head: RequestHead) -> Step? {
        let now = Self.now()
        requestInFlight = true
        core.requestStarted()
        let match = core.router.match(method: head.method, path: head.path)
        current = CurrentRequest(head: head, match: match, receivedAt: now)
        phase = .readingBody(since: now)
        guard head.hasBody else { return nil }
        if case .found(let route, _) = match, let admission = route.admission, !bodyIsBuffered(head) {
            phase = .admitting
            return .admit(admission)
        }
        return prepareBody(of: head, match: match)
    }

    /// Whether the whole body is already in the parser's buffer: then admission runs with
    /// the handler, and a refused request has cost nothing more than it would have anyway.
    private func bodyIsBuffered(_ head: RequestHead) -> Bool {
        if case .contentLength(let length) = head.framing { return parser.bufferedByteCount >= length }
        return false
    }

    /// The route's admission has let the request in (on a worker, which owns the
    /// connection): its body may now be read.
    func admitted(_ value: any Sendable) -> Step {
        guard let request = current else { return .close }
        current?.admitted = value
        phase = .readingBody(since: Self.now())
        return prepareBody(of: request.head, match: request.match) ?? nextStep()
    }

    private func prepareBody(of head: RequestHead, match: Router.Match) -> Step? {
        var consumer: (any BodyConsumer)?
        if case .found(let route, _) = match {
            do {
                consumer = try route.body.makeConsumer(head)
            } catch {
                return refuse(error)
            }
        }
        guard var consumer else { return skipBody(of: head) }
        parser.bodyLimit = consumer.limit
        var declaredLength: Int?
        if case .contentLength(let length) = head.framing {
            guard length <= consumer.limit else { return refuse(HTTPError(HTTPParseError.payloadTooLarge)) }
            declaredLength = length
        }
        current?.memoryWanted = consumer.prepare(declaredLength: declaredLength)
        current?.consumer = consumer
        return reserveBodyMemory()
    }

    /// A route that takes no body (or no route) is answered without reading it. If the body
    /// is already here it is passed over and the connection goes on; otherwise the
    /// connection ends after the answer rather than read what nobody wants.
    private func skipBody(of head: RequestHead) -> Step? {
        if case .contentLength(let length) = head.framing, parser.bufferedByteCount >= length {
            current?.skippingBody = true
            parser.bodyLimit = length
            return nil
        }
        return dispatch(body: .empty, closesConnection: true)
    }

    /// Claims the body's memory from the budget, or waits its turn without reading on. Nil
    /// once it has it and the body may be read.
    func reserveBodyMemory() -> Step? {
        guard let request = current, request.consumer != nil else { return nil }
        let ticket = request.memoryTicket
            ?? core.bodyMemory.claim(request.memoryWanted, client: ClientKey.of(remoteAddress),
                                     onGrant: { [loop, id] in loop.schedule(id) })
        current?.memoryTicket = ticket
        guard ticket.isGranted else {
            if case .awaitingMemory = phase {} else { phase = .awaitingMemory(since: Self.now()) }
            return .awaitMemory
        }
        // The body clock starts when we are ready to read it, not while we made it wait.
        phase = .readingBody(since: Self.now())
        if current?.head.expectsContinue == true {
            outbox += Self.continueResponse
            guard flush() else { return .close }
            if hasPendingOutput { return .awaitOutput }
        }
        return nil
    }

    private func consume(_ piece: ArraySlice<UInt8>) -> Step? {
        guard current?.skippingBody == false, current?.consumer != nil else { return nil }
        do {
            try current?.consumer?.consume(piece)
        } catch {
            return refuse(error)
        }
        return nil
    }

    private func complete() -> Step {
        guard var consumer = current?.consumer else { return dispatch(body: .empty, closesConnection: false) }
        current?.consumer = nil
        let body: RequestBody
        do {
            body = try consumer.finish()
        } catch {
            // The consumer goes first (its temporary files with it), then the answer.
            _ = consume consumer
            return refuse(error)
        }
        return dispatch(body: body, closesConnection: false)
    }

    private func dispatch(body: RequestBody, closesConnection: Bool) -> Step {
        guard let request = current else { return .close }
        phase = .handling
        requestsDispatched += 1
        let isLast = closesConnection || requestsDispatched >= core.configuration.maxRequestsPerConnection
        if isLast { closeAfterWrite = true }
        return .handle(ServerCore.Exchange(head: request.head, body: body, match: request.match,
                                           remoteAddress: remoteAddress, receivedAt: request.receivedAt,
                                           closesConnection: isLast, admitted: request.admitted))
    }

    /// Keeps the deadline phase in step with what the parser has seen: the first byte of a
    /// head starts its clock (on a new connection, the clock started when it opened).
    private func noteWaitingForInput() {
        guard case .idle(let since, let isNew) = phase, !parser.isIdle else { return }
        phase = .readingHead(deadline: core.timeouts.headDeadline(connectionOpenedAt: isNew ? since : nil,
                                                                  firstByte: Self.now()))
    }

    /// Answers a request we will not handle (bad framing, limits, timeout, a body its
    /// consumer refused), then closes: what follows on the connection cannot be trusted.
    func refuse(_ error: HTTPError) -> Step {
        closeAfterWrite = true
        answerQueued = true
        current?.consumer = nil
        // Its body will not be read: the memory goes back (or the line is left) before the
        // answer, which a waiting client may see at once.
        releaseBodyMemory()
        outbox += core.render(error, head: current?.head, route: current?.match.pattern, since: current?.receivedAt)
        phase = .writing(lastProgress: Self.now())
        guard flush() else { return .close }
        // Answered: no longer in flight, even while the connection lingers.
        return hasPendingOutput ? .awaitOutput : afterWrite()
    }

    /// Gives the body's memory back to the budget (others may be waiting for it), or leaves
    /// the line if it was still waiting.
    func releaseBodyMemory() {
        guard let ticket = current?.memoryTicket else { return }
        current?.memoryTicket = nil
        core.bodyMemory.giveBack(ticket)
    }

    /// The request's answer is out (or the connection is gone): it is no longer in flight.
    func finishRequest() {
        answerQueued = false
        releaseBodyMemory()
        current = nil
        if requestInFlight {
            requestInFlight = false
            core.requestFinished()
        }
    }
}
