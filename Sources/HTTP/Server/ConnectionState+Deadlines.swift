/// The clock and the stop, as the state machine sees them.
extension ConnectionState {
    enum DeadlineAction: Equatable {
        case none
        case close
        /// Answer with this error, then close.
        case refuse(HTTPError)
    }

    enum ShutdownAction: Equatable {
        /// Between requests: a head may be waiting unread in the socket (sent before the
        /// stop, so in flight like any other); read it, then `shutdownAfterReading`.
        case readWaitingHead
        /// A stream ends at once.
        case endStream
        /// Nothing now: the request in flight is answered (with `Connection: close`), or a
        /// worker has the connection, or it is on its way out anyway.
        case carryOn
    }

    /// What a connection past one of its deadlines must do. `bodyBytesReceived`: of the
    /// body being read, for its minimum rate.
    func deadline(now: UInt64, bodyBytesReceived: Int) -> DeadlineAction {
        switch phase {
        case .idle(let since, let isNew):
            return now >= since + (isNew ? timeouts.header : timeouts.idle) ? .close : .none
        case .readingHead(let deadline):
            return now >= deadline ? .refuse(HTTPError(.requestTimeout, message: "request head not received in time")) : .none
        case .readingBody(_, let since):
            guard timeouts.isBodyTooSlow(start: since, received: bodyBytesReceived, now: now) else { return .none }
            return .refuse(HTTPError(.requestTimeout, message: "request body arrived too slowly"))
        case .writing(_, let lastProgress):
            return now >= lastProgress + timeouts.idle ? .close : .none
        case .lingering(let since, _):
            return now >= since + timeouts.linger ? .close : .none
        case .awaitingMemory(_, let since):
            // Others hold the budget with bodies of their own: a clear answer, not a hang.
            guard now >= since + timeouts.bodyGrace else { return .none }
            return .refuse(HTTPError(.serviceUnavailable, message: "the server is busy receiving other uploads; try again shortly",
                                     headers: HTTPHeaders([("Retry-After", "1")])))
        case .admitting, .handling, .streaming, .closed:
            return .none
        }
    }

    /// A stop: what is idle closes, a stream ends, a request in flight (its head has
    /// arrived) is read to its end and answered with `Connection: close`.
    mutating func beginShutdown() -> ShutdownAction {
        switch phase {
        case .idle, .readingHead:
            return .readWaitingHead
        case .streaming:
            return .endStream
        case .awaitingMemory, .readingBody, .writing:
            closeAfterWrite = true
            return .carryOn
        case .admitting, .handling, .lingering, .closed:
            return .carryOn
        }
    }

    /// After a stop's read of what was waiting: true when no request came (close now);
    /// otherwise the request that did is the connection's last.
    mutating func shutdownAfterReading() -> Bool {
        if isBetweenRequests { return true }
        closeAfterWrite = true
        return false
    }
}
