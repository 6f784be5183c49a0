import Logging

/// One finished exchange, as the access log records it.
public struct AccessLogEntry: Sendable {
    public let method: String
    /// The path as sent, without the query (which may carry tokens or emails).
    public let path: Substring
    /// The matched route's pattern (`/api/posts/:id`), or nil when no route matched.
    public let route: String?
    public let status: Int
    /// Body bytes sent.
    public let bytes: Int
    public let durationNanoseconds: UInt64
    public let requestID: String
    /// The client's address: the peer's, or behind a trusted proxy the one its
    /// `X-Forwarded-For` names (`TrustedProxies`), the address every per-client limit used.
    public let client: String

    public init(method: String, path: Substring, route: String?, status: Int, bytes: Int,
                durationNanoseconds: UInt64, requestID: String, client: String) {
        self.method = method
        self.path = path
        self.route = route
        self.status = status
        self.bytes = bytes
        self.durationNanoseconds = durationNanoseconds
        self.requestID = requestID
        self.client = client
    }
}

/// Where access-log lines go: one per request. A protocol of its own because it runs for
/// every request: the application writes it without general-purpose logging's overhead.
public protocol AccessLog: Sendable {
    func record(_ entry: AccessLogEntry)
}

/// The default: an info-level "request" event through swift-log.
public struct LoggerAccessLog: AccessLog {
    let logger: Logger

    public init(logger: Logger) { self.logger = logger }

    public func record(_ entry: AccessLogEntry) {
        logger.info("request", metadata: [
            "client": .string(entry.client), "method": .string(entry.method), "path": .string(String(entry.path)),
            "route": .string(entry.route ?? "-"),
            "status": .stringConvertible(entry.status), "bytes": .stringConvertible(entry.bytes),
            "duration_ms": .string(AccessLogEntry.milliseconds(entry.durationNanoseconds)),
            "request_id": .string(entry.requestID),
        ])
    }
}

extension AccessLogEntry {
    /// `12.34`: milliseconds with two decimals, without Foundation's formatters.
    public static func milliseconds(_ nanoseconds: UInt64) -> String {
        let hundredths = (nanoseconds + 5_000) / 10_000
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
