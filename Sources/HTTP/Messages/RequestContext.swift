import Dispatch
import Logging

/// What a handler knows about its request beyond the request itself.
public struct RequestContext: Sendable {
    /// The `X-Request-Id` of the exchange (the client's, or one made up here).
    public let requestID: String
    private let baseLogger: Logger
    public let parameters: Parameters
    /// The matched route's pattern, or nil when no route matched.
    public let route: String?
    /// The client's address: the TCP peer's, or when the peer is a trusted proxy, the one
    /// its `X-Forwarded-For` names (`ServerConfiguration.trustedProxies`). What per-client
    /// limits count against.
    public let remoteAddress: String
    /// What the route's `Admission` returned for this request; nil when it has none.
    public let admitted: (any Sendable)?
    /// The workers running the handler.
    public let lane: WorkLane
    /// When its head had arrived (`DispatchTime` uptime, ns): whatever the client did before
    /// sending it had happened by then.
    public let receivedAt: UInt64

    public init(requestID: String, logger: Logger, parameters: Parameters = Parameters(), route: String? = nil,
                remoteAddress: String = "", admitted: (any Sendable)? = nil, lane: WorkLane = .standard,
                receivedAt: UInt64 = DispatchTime.now().uptimeNanoseconds) {
        self.requestID = requestID
        self.baseLogger = logger
        self.parameters = parameters
        self.route = route
        self.remoteAddress = remoteAddress
        self.admitted = admitted
        self.lane = lane
        self.receivedAt = receivedAt
    }

    /// Goes on only on the heavy lane: on the standard one it throws `MoveToHeavyLane`, and
    /// the server runs the handler again from the start on a heavy-lane thread. Call it
    /// before any side effect, once the request is known to need long work.
    public func requireHeavyLane() throws(MoveToHeavyLane) {
        if lane != .heavy { throw MoveToHeavyLane() }
    }

    /// A logger whose lines carry the request id; tagged only when asked for, since most
    /// requests never log beyond their access-log line.
    public var logger: Logger {
        var logger = baseLogger
        logger[metadataKey: "request_id"] = .string(requestID)
        return logger
    }
}

/// Which threads run a handler: the standard workers (sized for the database pool), or the
/// heavy lane's few (`ServerConfiguration.heavyWorkerThreads`) for long CPU-bound work.
public enum WorkLane: Sendable {
    case standard, heavy
}

/// Thrown by `RequestContext.requireHeavyLane` on the standard lane: the request is run
/// again on the heavy lane. The connection waits for it; nothing is answered meanwhile.
public struct MoveToHeavyLane: Error, Sendable {
    public init() {}
}
