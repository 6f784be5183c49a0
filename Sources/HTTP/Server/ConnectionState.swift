/// What a connection knows between events, as one value: the phase it is in, and in each
/// phase what that phase owns (the request in flight, its body consumer and memory
/// ticket). Events are `mutating` methods that return what the owner must do next; none
/// of them touches a socket, a poller or a thread, so every transition is tested without
/// any (`ConnectionStateTests`), as postgres-nio tests its connection state machines.
/// `HTTPConnection` owns one, performs its actions, and keeps the I/O: the socket, the
/// parser's bytes, the outbox, files and streams.
struct ConnectionState {
    /// A request whose head has arrived and whose answer is not yet out: from its head to
    /// its answer it counts as in flight (a stop waits for it).
    struct Request {
        let head: RequestHead
        /// Whom the request counts against: the peer, or the client a trusted proxy names.
        let clientAddress: String
        let match: Router.Match
        let receivedAt: UInt64
        var consumer: (any BodyConsumer)?
        /// What the consumer asked of the body budget, and its claim once made.
        var memoryWanted = 0
        var memoryTicket: BodyMemoryBudget.Ticket?
        /// The route takes no body, and the body is already here: it is passed over so the
        /// connection can go on.
        var skippingBody = false
        /// What the route's admission returned, when it ran before the body was read.
        var admitted: (any Sendable)?
        /// Reading stopped until the consumer's writes catch up (`bodyIsBehind`).
        var waitsForWrites = false
        /// The body has ended, but its consumer's writes had yet to.
        var bodyEnded = false
    }

    enum Phase {
        /// Between requests, nothing of the next one received. `isNew`: the connection has
        /// sent nothing yet, so the head deadline runs from `since` (when it opened).
        case idle(since: UInt64, isNew: Bool)
        case readingHead(deadline: UInt64)
        /// A worker decides on the request from its head (`Admission`); nothing is read.
        case admitting(Request)
        /// The body waits for memory from the body budget (nothing is read).
        case awaitingMemory(Request, since: UInt64)
        case readingBody(Request, since: UInt64)
        /// A worker has the request.
        case handling(Request)
        /// A final answer is going out; its request (nil when the head itself was refused)
        /// is finished once it is out.
        case writing(Request?, lastProgress: UInt64)
        /// A response stream is open; its request is finished when the loop takes it over.
        case streaming(Request?)
        /// The last answer is out and our side is shut; unread input is drained (up to a
        /// limit) so that closing does not reset the connection under the answer.
        case lingering(since: UInt64, drained: Int)
        case closed
    }

    /// What the owner gives back when a request ends: its memory claim, and whether a
    /// request in flight ended (the server's count a stop waits on).
    struct Finished {
        var ticket: BodyMemoryBudget.Ticket?
        var requestEnded = false
    }

    let timeouts: ConnectionTimeouts
    let maxRequestsPerConnection: Int
    // Changed only by the events in this file and its extensions, never by the connection.
    var phase: Phase
    /// The answer under way is the connection's last (a refusal, `Connection: close`, the
    /// request limit, a stop).
    var closeAfterWrite = false
    /// The client has shut its side: once nothing is left to answer, the connection closes.
    var inputClosed = false
    /// Requests handed to a handler so far, against `maxRequestsPerConnection`.
    var requestsDispatched = 0

    init(timeouts: ConnectionTimeouts, maxRequestsPerConnection: Int, openedAt now: UInt64) {
        self.timeouts = timeouts
        self.maxRequestsPerConnection = maxRequestsPerConnection
        phase = .idle(since: now, isNew: true)
    }

    /// The request in flight, whatever the phase.
    var request: Request? {
        switch phase {
        case .admitting(let request), .awaitingMemory(let request, _), .readingBody(let request, _),
             .handling(let request):
            request
        case .writing(let request, _), .streaming(let request):
            request
        case .idle, .readingHead, .lingering, .closed:
            nil
        }
    }

    /// What the connection is waiting on, without its payload: the owner switches on this,
    /// not on `phase`, whose copy would keep the request's consumer (and its temporary
    /// files) alive for as long as the switch runs.
    enum Activity {
        case awaitingMemory, awaitingWrites, streaming, lingering, other
    }

    var activity: Activity {
        switch phase {
        case .awaitingMemory: .awaitingMemory
        case .readingBody(let request, _) where request.waitsForWrites: .awaitingWrites
        case .streaming: .streaming
        case .lingering: .lingering
        default: .other
        }
    }

    var isClosed: Bool {
        if case .closed = phase { return true }
        return false
    }

    /// Between requests: nothing of one has arrived, or only part of its head.
    var isBetweenRequests: Bool {
        switch phase {
        case .idle, .readingHead: true
        default: false
        }
    }

    /// Replaces the request in flight (its phase unchanged), for the steps that change it.
    mutating func updateRequest(_ change: (inout Request) throws(HTTPError) -> Void) throws(HTTPError) {
        switch phase {
        case .admitting(var request):
            phase = .closed  // the payload is not shared while it changes: no copy of a body
            defer { phase = .admitting(request) }
            try change(&request)
        case .awaitingMemory(var request, let since):
            phase = .closed
            defer { phase = .awaitingMemory(request, since: since) }
            try change(&request)
        case .readingBody(var request, let since):
            phase = .closed
            defer { phase = .readingBody(request, since: since) }
            try change(&request)
        case .handling(var request):
            phase = .closed
            defer { phase = .handling(request) }
            try change(&request)
        case .writing(var request?, let progress):
            phase = .closed
            defer { phase = .writing(request, lastProgress: progress) }
            try change(&request)
        default:
            break
        }
    }

    /// The memory claim of the request in flight, taken back from it (the handler is done
    /// with the body, or the body will not be read).
    mutating func takeMemoryTicket() -> BodyMemoryBudget.Ticket? {
        var ticket: BodyMemoryBudget.Ticket?
        try? updateRequest { request in
            ticket = request.memoryTicket
            request.memoryTicket = nil
        }
        return ticket
    }

    /// The connection is closed (by either side, or a stop): whatever was in flight ends.
    mutating func close() -> Finished {
        let finished = Finished(ticket: request?.memoryTicket, requestEnded: request != nil)
        phase = .closed
        return finished
    }
}
