import Foundation

/// How the server listens, how long it waits, and how much it accepts.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port; `Server.port` tells which.
    public var port: Int
    public var limits = RequestParser.Limits()
    /// A request head must be complete within this time of the connection opening (or, on a
    /// kept-alive connection, of its first byte), however slowly it trickles.
    public var headerTimeout: Duration = .seconds(10)
    /// A keep-alive connection with no request, or a response the client stops reading, is
    /// closed after this time.
    public var idleTimeout: Duration = .seconds(60)
    /// A body must arrive at `minimumBodyRate` bytes per second on average once this much
    /// time has passed since it began (408 and a close otherwise).
    public var bodyGracePeriod: Duration = .seconds(10)
    public var minimumBodyRate = 1024
    /// How long a stop waits for requests in flight.
    public var shutdownGracePeriod: Duration = .seconds(10)
    /// A request that waited longer than this for a worker is answered 503 (with
    /// `Retry-After`) without running: under overload, a bounded wait and a clear answer
    /// instead of a queue that only grows.
    public var maxQueueWait: Duration = .seconds(3)
    /// Open connections; a new one past this is accepted and closed at once.
    public var maxConnections = 10_000
    /// Open connections from one peer address (an IPv6 host by its /64, see `ClientKey`);
    /// a new one past this is accepted and closed at once. 0 turns it off. Trusted proxies
    /// are not counted: each of their connections carries many clients.
    public var maxConnectionsPerIP = 256
    /// Peers whose `X-Forwarded-For` names the client (`TrustedProxies`): then that address
    /// is the request's `RequestContext.remoteAddress`, what admission and the access log
    /// see, and whose share of the body budget it takes. From other peers the header is
    /// ignored.
    public var trustedProxies = TrustedProxies.none
    /// Requests on one connection: the answer to the last says `Connection: close`, so no
    /// client keeps one connection (and its place in a loop) forever.
    public var maxRequestsPerConnection = 10_000
    /// Memory for request bodies being received, all connections together; past it,
    /// reading waits (`BodyMemoryBudget`).
    public var maxBodyMemory = 64 * 1024 * 1024
    /// Threads that run handlers. Handlers block on the database, so this is about the
    /// database pool's size, not the core count.
    public var workerThreads: Int
    /// Threads of the coalescing lane: routes whose handlers wait for a batch of their kind
    /// (`Router.Route.coalesces`). Waiting holds no database connection, so there are more of
    /// them than workers: the more wait, the larger the batches. 0: they run on the workers.
    public var coalescingWorkerThreads = 0
    /// Threads of the heavy lane: handlers whose work is long and CPU-bound (decoding
    /// images) move there (`RequestContext.requireHeavyLane`), so they never hold the
    /// workers every other request needs; their count bounds how many run at once.
    public var heavyWorkerThreads: Int
    /// How long a request may wait for a heavy-lane thread before it is answered 503: long,
    /// because such work queues behind its own kind only and is worth the wait.
    public var heavyQueueWait: Duration = .seconds(60)
    /// Event-loop threads that own the sockets.
    public var ioThreads: Int
    /// What the loops wait on: epoll (Linux) or Dispatch sources (everywhere).
    public var poller = PollerKind.platformDefault
    /// How errors become responses: the application's envelope and code table.
    public var errorRenderer = ErrorRenderer.plainText

    public init(host: String = "127.0.0.1", port: Int = 8080) {
        self.host = host
        self.port = port
        let cores = ProcessInfo.processInfo.activeProcessorCount
        self.workerThreads = max(4, 2 * cores)
        self.ioThreads = max(1, cores)
        self.heavyWorkerThreads = max(1, cores)
    }

    /// How often the loops look for connections past a deadline: fine enough for the
    /// shortest timeout, never busier than every 5 ms.
    var sweepInterval: Duration {
        max(min(headerTimeout, idleTimeout, bodyGracePeriod, .seconds(1)) / 4, .milliseconds(5))
    }
}

extension Duration {
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
