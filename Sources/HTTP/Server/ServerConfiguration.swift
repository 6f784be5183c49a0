import Foundation

/// How the server listens, how long it waits, and how much it accepts.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port; `Server.port` tells which.
    public var port: Int
    public var limits = RequestParser.Limits()
    /// A client must send a complete request head within this time.
    public var headerTimeout: Duration = .seconds(10)
    /// A keep-alive connection with no request, or a transfer making no progress, is
    /// closed after this time.
    public var idleTimeout: Duration = .seconds(60)
    /// How long a stop waits for requests in flight.
    public var shutdownGracePeriod: Duration = .seconds(10)
    /// A request that waited longer than this for a worker is answered 503 (with
    /// `Retry-After`) without running: under overload, a bounded wait and a clear answer
    /// instead of a queue that only grows.
    public var maxQueueWait: Duration = .seconds(3)
    /// Threads that run handlers. Handlers block on the database, so this is about the
    /// database pool's size, not the core count.
    public var workerThreads: Int
    /// Event-loop threads that own the sockets.
    public var ioThreads: Int

    public init(host: String = "127.0.0.1", port: Int = 8080) {
        self.host = host
        self.port = port
        let cores = ProcessInfo.processInfo.activeProcessorCount
        self.workerThreads = max(4, 2 * cores)
        self.ioThreads = max(1, cores)
    }
}

extension Duration {
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
