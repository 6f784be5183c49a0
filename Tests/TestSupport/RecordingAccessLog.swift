import HTTP
import Synchronization

/// An access log that keeps its entries, for tests that check what a line would say.
public final class RecordingAccessLog: AccessLog {
    private let recorded = Mutex<[AccessLogEntry]>([])

    public init() {}

    public func record(_ entry: AccessLogEntry) {
        recorded.withLock { $0.append(entry) }
    }

    /// The entry of the exchange with this `X-Request-Id`: the access log is written as
    /// the answer is made, so it is there once the client has read the answer.
    public func entry(requestID: String) -> AccessLogEntry? {
        recorded.withLock { entries in entries.last { $0.requestID == requestID } }
    }
}
