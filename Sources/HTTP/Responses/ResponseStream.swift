/// A response body written over time (chunked; Server-Sent Events are one). The handler
/// returns it; once the head is on its way the server calls `start` with the stream's
/// writer, which the producer keeps and writes to from any thread.
///
/// A stream is not a request in flight: it does not hold up a stop (on SIGTERM it is ended
/// at once), and it is not idle either (no write timeout while it is open). A client that
/// closes its side (end of input) ends the stream: streams are for clients that listen.
public struct ResponseStream: Sendable {
    /// Bytes that may wait in the server for a client that reads slowly (beyond what its
    /// socket buffer took, chunk framing aside); a write that would pass it is refused
    /// with `.full`.
    public let queueLimit: Int
    let start: @Sendable (StreamWriter) -> Void

    public init(queueLimit: Int = 1 << 20, start: @escaping @Sendable (StreamWriter) -> Void) {
        self.queueLimit = queueLimit
        self.start = start
    }
}
