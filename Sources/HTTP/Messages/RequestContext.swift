import Logging

/// What a handler knows about its request beyond the request itself.
public struct RequestContext: Sendable {
    /// The `X-Request-Id` of the exchange (the client's, or one made up here).
    public let requestID: String
    private let baseLogger: Logger
    public let parameters: Parameters
    /// The matched route's pattern, or nil when no route matched.
    public let route: String?
    public let remoteAddress: String
    /// What the route's `Admission` returned for this request; nil when it has none.
    public let admitted: (any Sendable)?

    public init(requestID: String, logger: Logger, parameters: Parameters = Parameters(), route: String? = nil,
                remoteAddress: String = "", admitted: (any Sendable)? = nil) {
        self.requestID = requestID
        self.baseLogger = logger
        self.parameters = parameters
        self.route = route
        self.remoteAddress = remoteAddress
        self.admitted = admitted
    }

    /// A logger whose lines carry the request id; tagged only when asked for, since most
    /// requests never log beyond their access-log line.
    public var logger: Logger {
        var logger = baseLogger
        logger[metadataKey: "request_id"] = .string(requestID)
        return logger
    }
}
