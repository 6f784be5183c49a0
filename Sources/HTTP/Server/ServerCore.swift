import Dispatch
import Logging
import Synchronization

/// What every connection shares: the router, the workers, the body budget, the logger, the
/// counters a stop waits on, and the one place where handler results and errors become
/// bytes.
final class ServerCore: Sendable {
    struct Exchange: Sendable {
        let head: RequestHead
        let body: RequestBody
        let match: Router.Match
        /// The client's address (`TrustedProxies`): the peer's, or the one its
        /// `X-Forwarded-For` names when the peer is a trusted proxy.
        let clientAddress: String
        let receivedAt: UInt64
        /// The body was left unread: the connection cannot carry another request.
        let closesConnection: Bool
        /// What the route's admission returned, when it ran before the body was read; nil
        /// when it is still to run (with the handler) or the route has none.
        var admitted: (any Sendable)? = nil
        /// Where the handler runs; `heavy` once it asked for it (`MoveToHeavyLane`).
        var lane = WorkLane.standard

        /// The route's handler may wait for a batch of its kind (`Router.Route.coalesces`).
        var coalesces: Bool {
            if case .found(let route, _) = match { return route.coalesces }
            return false
        }

        /// Routing errors and never-blocking routes are answered on the loop itself.
        var runsOnEventLoop: Bool {
            if case .found(let route, _) = match { return route.runsOnEventLoop }
            return true
        }
    }

    /// A response ready to write: the head (and an in-memory body) as bytes, then maybe a
    /// file or a stream.
    struct Answer: Sendable {
        var bytes: [UInt8]
        var file: FileBody?
        var stream: ResponseStream?
        let keepAlive: Bool
    }

    let configuration: ServerConfiguration
    let timeouts: ConnectionTimeouts
    let router: Router
    let workers: WorkerPool
    let heavyWorkers: WorkerPool
    /// Where routes that coalesce run (`workers` itself when it has no threads of its own).
    let coalescingWorkers: WorkerPool
    let bodyMemory: BodyMemoryBudget
    let connectionsPerAddress: ConnectionsPerAddress
    let logger: Logger
    let accessLog: any AccessLog
    private let stopping = Atomic<Bool>(false)
    private let openConnections = Atomic<Int>(0)
    private let refusedConnections = Atomic<Int>(0)
    private let requestsInFlight = DispatchGroup()

    init(configuration: ServerConfiguration, router: Router, logger: Logger, accessLog: (any AccessLog)?) {
        self.configuration = configuration
        self.timeouts = ConnectionTimeouts(configuration)
        self.router = router
        self.logger = logger
        self.accessLog = accessLog ?? LoggerAccessLog(logger: logger)
        self.bodyMemory = BodyMemoryBudget(capacity: configuration.maxBodyMemory)
        self.connectionsPerAddress = ConnectionsPerAddress(limit: configuration.maxConnectionsPerIP,
                                                           trustedProxies: configuration.trustedProxies)
        self.workers = WorkerPool(threads: configuration.workerThreads, name: "http-worker")
        self.coalescingWorkers = configuration.coalescingWorkerThreads > 0
            ? WorkerPool(threads: configuration.coalescingWorkerThreads, name: "http-coalescing") : workers
        self.heavyWorkers = WorkerPool(threads: configuration.heavyWorkerThreads, name: "http-heavy")
    }

    /// Sequentially consistent, as is a worker's hand-back of a connection (see
    /// `HTTPConnection.release`): one of the two always sees the other.
    var isStopping: Bool { stopping.load(ordering: .sequentiallyConsistent) }

    /// True for the one caller that starts the stop.
    func beginStopping() -> Bool {
        stopping.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
    }

    var connectionCount: Int { openConnections.load(ordering: .relaxed) }
    var refusedConnectionCount: Int { refusedConnections.load(ordering: .relaxed) }
    func connectionOpened() { openConnections.add(1, ordering: .relaxed) }
    func connectionClosed() { openConnections.subtract(1, ordering: .relaxed) }
    /// A connection closed at once: `maxConnections` were open, or its address's share.
    func connectionRefused() { refusedConnections.add(1, ordering: .relaxed) }

    /// A request is in flight from the moment its head has arrived until its answer is out.
    func requestStarted() { requestsInFlight.enter() }
    func requestFinished() { requestsInFlight.leave() }

    /// Waits for requests in flight; false if some were still running at the deadline.
    func waitForRequests(timeout: Duration) -> Bool {
        requestsInFlight.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .success
    }

    /// Routes, calls the handler, turns errors into responses (on a worker, or on the
    /// loop for routes that never block). Nil when the handler asked for the heavy lane:
    /// the exchange is to run there, body and uploads untouched, with what its admission
    /// returned kept in it (a rate limit counts a request once).
    func respond(to exchange: inout Exchange) -> Answer? {
        let head = exchange.head
        let requestID = RequestID.from(head.headers["X-Request-Id"])
        let response: Response
        switch exchange.match {
        case .notFound:
            response = render(.notFound("no route for \(head.method) \(head.path)"))
        case .methodNotAllowed(let allowed):
            let allow = allowed.map(\.rawValue).joined(separator: ", ")
            response = render(HTTPError(.methodNotAllowed, message: "\(head.method) is not allowed here; use \(allow)",
                                 headers: HTTPHeaders([("Allow", allow)])))
        case .found(let route, let parameters):
            do {
                let admitted = try exchange.admitted ?? route.admission?.admit(head, remoteAddress: exchange.clientAddress)
                exchange.admitted = admitted
                let context = RequestContext(requestID: requestID, logger: logger, parameters: parameters,
                                             route: route.pattern, remoteAddress: exchange.clientAddress,
                                             admitted: admitted, lane: exchange.lane, receivedAt: exchange.receivedAt)
                let request = try Request(head: head, content: exchange.body)
                response = try route.handler(request, context)
            } catch is MoveToHeavyLane where exchange.lane == .standard {
                return nil
            } catch {
                response = render(httpError(for: error, route: route.pattern, requestID: requestID))
            }
        }
        // Before the answer goes out: a client that sees it finds no upload left that the
        // handler did not keep.
        if case .form(let form) = exchange.body { form.discardUnkeptFiles() }
        return finish(response, for: exchange, requestID: requestID)
    }

    /// What a handler's (or an admission's) error means in HTTP. A bug or an outage is
    /// logged here, with its detail; the client learns only that it was our fault.
    func httpError(for error: any Error, route: String, requestID: String) -> HTTPError {
        var logger = logger
        logger[metadataKey: "request_id"] = .string(requestID)
        switch error {
        case let error as HTTPError:
            return error
        case let convertible as any HTTPResponseConvertible:
            let mapped = convertible.httpError
            if mapped.status.code >= 500 {
                logger.error("request failed", metadata: ["error": "\(String(reflecting: error))", "route": "\(route)"])
            }
            return mapped
        default:
            logger.error("handler failed", metadata: ["error": "\(error)", "route": "\(route)"])
            return HTTPError(.internalServerError, message: "internal error")
        }
    }

    /// Said when a request waited too long for a worker.
    let busyError = HTTPError(.serviceUnavailable, message: "the server is busy; try again shortly",
                              headers: HTTPHeaders([("Retry-After", "1")]))

    /// The answer for a request that waited too long for a worker: 503, handler not run.
    func respondBusy(to exchange: Exchange) -> Answer {
        let response = render(busyError)
        return finish(response, for: exchange, requestID: RequestID.from(exchange.head.headers["X-Request-Id"]))
    }

    /// Compresses the response when it may (on the thread that made it: a worker for routes
    /// that block), serializes it and writes the access-log line.
    private func finish(_ response: Response, for exchange: Exchange, requestID: String) -> Answer {
        let head = exchange.head
        if response.dropsConnection {
            // Logged with status 0: nothing was answered.
            logAccess(method: head.method.rawValue, target: head.target, route: exchange.match.pattern, status: 0, bytes: 0,
                      since: exchange.receivedAt, requestID: requestID, client: exchange.clientAddress)
            return Answer(bytes: [], keepAlive: false)
        }
        let response = response.compressed(for: head)
        let keepAlive = head.keepAlive && !exchange.closesConnection && !isStopping
            && response.canKeepAlive(version: head.version)
        var answer = Answer(bytes: response.serializeHead(requestID: requestID, date: HTTPDate.now(),
                                                          keepAlive: keepAlive, version: head.version),
                            keepAlive: keepAlive)
        let sendsBody = head.method != .HEAD && !response.status.forbidsBody
        if sendsBody {
            switch response.body {
            case .bytes(let bytes): answer.bytes += bytes
            case .file(let file): answer.file = file
            case .stream(let stream): answer.stream = stream
            }
        }
        logAccess(method: head.method.rawValue, target: head.target, route: exchange.match.pattern, status: response.status.code,
                  bytes: sendsBody ? response.body.length ?? 0 : 0, since: exchange.receivedAt, requestID: requestID,
                  client: exchange.clientAddress)
        return answer
    }

    /// The bytes of a refusal made before any handler ran; the connection closes after it.
    /// `head` and `route`: what is known of the request refused (nothing when its head was
    /// the trouble); `client`: its client's address, or the peer's when its head was.
    func render(_ error: HTTPError, head: RequestHead?, route: String?, since: UInt64?, client: String) -> [UInt8] {
        let requestID = head.map { RequestID.from($0.headers["X-Request-Id"]) } ?? RequestID.make()
        let response = render(error)
        logAccess(method: head?.method.rawValue ?? "-", target: head?.target ?? "-", route: route, status: error.status.code,
                  bytes: response.body.length ?? 0, since: since ?? DispatchTime.now().uptimeNanoseconds,
                  requestID: requestID, client: client)
        return response.serializeHead(requestID: requestID, date: HTTPDate.now(), keepAlive: false, version: .http1_1)
            + (response.body.inlineBytes ?? [])
    }

    /// An error as the application renders it (`ServerConfiguration.errorRenderer`).
    func render(_ error: HTTPError) -> Response {
        configuration.errorRenderer.response(for: error)
    }

    private func logAccess(method: String, target: String, route: String?, status: Int, bytes: Int, since: UInt64,
                           requestID: String, client: String) {
        let path = target.firstIndex(of: "?").map { target[..<$0] } ?? Substring(target)
        accessLog.record(AccessLogEntry(method: method, path: path, route: route, status: status, bytes: bytes,
                                        durationNanoseconds: DispatchTime.now().uptimeNanoseconds &- since,
                                        requestID: requestID, client: client))
    }
}

/// Request ids: the client's own when it is sane, else 16 random hex digits.
enum RequestID {
    static func from(_ header: String?) -> String {
        if let header, !header.isEmpty, header.utf8.count <= 128,
           header.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            return header
        }
        return make()
    }

    /// Unique and unguessable enough for tracing, without a getrandom(2) per request:
    /// a random start, a counter, and SplitMix64's mixing.
    static func make() -> String {
        var value = sequence.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        value ^= value >> 31
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    private static let sequence = Atomic<UInt64>(UInt64.random(in: .min ... .max))
}
