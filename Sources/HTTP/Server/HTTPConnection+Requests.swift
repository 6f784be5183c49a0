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
            // An upload whose disk writes are behind: TCP holds the rest back meanwhile.
            if state.bodyIsBehind(untilDone: false, wake: wakeOnLoop) { return .awaitWrites }
            switch Socket.read(socket.fd, into: buffer) {
            case .transferred(let count):
                parser.feed(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                let step = nextStep()
                // A short read emptied the socket: no second read to hear EAGAIN.
                guard case .awaitInput = step, count == buffer.count else { return step }
            case .wouldBlock:
                return .awaitInput
            case .closed:
                state.inputClosed = true
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
                if !parser.isIdle { state.headBegan(now: Self.now()) }
                return .awaitInput
            case .head(let head):
                if let step = begin(head) { return step }
            case .body(let piece):
                do {
                    try state.consume(piece)
                } catch {
                    return refuse(error)
                }
            case .end:
                return complete()
            }
        }
    }

    /// The head has arrived: the request is in flight. A route with an admission whose
    /// body is still to come is decided on first, by a worker (`admitted(_:)` goes on from
    /// there); otherwise the body's consumer is chosen and its memory reserved. Nil to go
    /// on parsing.
    private func begin(_ head: RequestHead) -> Step? {
        core.requestStarted()
        let match = core.router.match(method: head.method, path: head.path)
        var bodyIsBuffered = false
        if case .contentLength(let length) = head.framing { bodyIsBuffered = parser.bufferedByteCount >= length }
        switch state.headReceived(head, clientAddress: clientAddress(of: head), match: match,
                                  bodyIsBuffered: bodyIsBuffered, now: Self.now()) {
        case .parse: return nil
        case .admit(let admission): return .admit(admission)
        case .prepareBody: return prepareBody(of: head, match: match)
        }
    }

    /// Whom the request counts against (rate limits, quotas, the body budget's shares) and
    /// the access log names: the peer, unless it is a trusted proxy (`TrustedProxies`).
    private func clientAddress(of head: RequestHead) -> String {
        guard peerIsTrustedProxy else { return peerAddress }
        return core.configuration.trustedProxies.clientAddress(behindTrusted: peerAddress,
                                                               forwardedFor: head.headers.values(of: "X-Forwarded-For"))
    }

    /// The route's admission has let the request in (on a worker, which owns the
    /// connection): its body may now be read.
    func admitted(_ value: any Sendable) -> Step {
        state.admitted(value, now: Self.now())
        guard let request = state.request else { return .close }
        return prepareBody(of: request.head, match: request.match) ?? nextStep()
    }

    /// Picks the body's consumer and reserves its memory. A route that takes no body (or no
    /// route) is answered without reading it: a body already here is passed over and the
    /// connection goes on; otherwise it ends after the answer rather than read what nobody
    /// wants.
    private func prepareBody(of head: RequestHead, match: Router.Match) -> Step? {
        var consumer: (any BodyConsumer)?
        if case .found(let route, _) = match {
            do {
                consumer = try route.body.makeConsumer(head)
            } catch {
                return refuse(error)
            }
        }
        switch state.chooseBody(consumer, buffered: parser.bufferedByteCount) {
        case .claimMemory(let limit):
            parser.bodyLimit = limit
            return reserveBodyMemory()
        case .skip(let length):
            parser.bodyLimit = length
            return nil
        case .dispatchWithoutBody:
            return dispatch(body: .empty, closesConnection: true)
        case .refuse(let error):
            return refuse(error)
        }
    }

    /// Claims the body's memory from the budget, or waits its turn without reading on. Nil
    /// once it has it and the body may be read.
    func reserveBodyMemory() -> Step? {
        let client = ClientKey.of(state.request?.clientAddress ?? peerAddress)
        let action = state.reserveMemory(now: Self.now()) { [core, wakeOnLoop] wanted in
            core.bodyMemory.claim(wanted, client: client, onGrant: wakeOnLoop)
        }
        switch action {
        case .none:
            return nil
        case .wait:
            return .awaitMemory
        case .readBody(let sendContinue):
            guard sendContinue else { return nil }
            outbox += Self.continueResponse
            guard flush() else { return .close }
            return hasPendingOutput ? .awaitOutput : nil
        }
    }

    /// The body has ended: once its consumer's writes are done, it goes to the handler.
    func complete() -> Step {
        if state.bodyIsBehind(untilDone: true, wake: wakeOnLoop) { return .awaitWrites }
        let body: RequestBody
        do {
            body = try state.finishBody()
        } catch {
            return refuse(error)
        }
        return dispatch(body: body, closesConnection: false)
    }

    private func dispatch(body: RequestBody, closesConnection: Bool) -> Step {
        guard let exchange = state.dispatch(body: body, closesConnection: closesConnection)
        else { return .close }
        return .handle(exchange)
    }

    /// Answers a request we will not handle (bad framing, limits, timeout, a body its
    /// consumer refused, an admission's no), then closes: what follows on the connection
    /// cannot be trusted.
    func refuse(_ error: HTTPError) -> Step {
        let (request, ticket) = state.refuse(now: Self.now())
        // Its body will not be read: the memory goes back (or the line is left) before the
        // answer, which a waiting client may see at once.
        if let ticket { core.bodyMemory.giveBack(ticket) }
        outbox += core.render(error, head: request?.head, route: request?.match.pattern, since: request?.receivedAt,
                              client: request?.clientAddress ?? peerAddress)
        guard flush() else { return .close }
        // Answered: no longer in flight, even while the connection lingers.
        return hasPendingOutput ? .awaitOutput : afterWrite()
    }

    /// Gives the body's memory back to the budget (others may be waiting for it): the
    /// handler is done with the body.
    func releaseBodyMemory() {
        if let ticket = state.takeMemoryTicket() { core.bodyMemory.giveBack(ticket) }
    }

    /// Does what the end of a request asks: its memory back, the stop's count down.
    func perform(_ finished: ConnectionState.Finished) {
        if let ticket = finished.ticket { core.bodyMemory.giveBack(ticket) }
        if finished.requestEnded { core.requestFinished() }
    }
}
