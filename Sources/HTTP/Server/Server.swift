import Dispatch
import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The HTTP/1.1 server: event-loop threads own the sockets, workers run the handlers,
/// and a stop is graceful.
public final class Server: Sendable {
    private let core: ServerCore
    private let loops: [EventLoop]
    private let listener: Int32
    /// The port actually bound (useful when the configuration asked for 0).
    public let port: Int
    public let host: String

    /// Binds and starts serving at once; logs `listening on http://HOST:PORT`.
    /// `accessLog` defaults to info-level "request" events on `logger`.
    public init(configuration: ServerConfiguration, router: Router, logger: Logger,
                accessLog: (any AccessLog)? = nil) throws {
        Socket.raiseOpenFileLimit()
        Socket.ignoreBrokenPipes()
        let (listener, port) = try Socket.listen(host: configuration.host, port: configuration.port)
        self.port = port
        self.host = configuration.host
        self.listener = listener
        let core = ServerCore(configuration: configuration, router: router, logger: logger, accessLog: accessLog)
        self.core = core
        do {
            loops = try (0..<max(1, configuration.ioThreads)).map {
                try EventLoop(index: $0, listener: listener, core: core,
                              poller: configuration.poller.makePoller(label: "http-poller-\($0)"))
            }
        } catch {
            Socket.close(listener)
            throw error
        }
        loops.forEach { $0.start() }
        logger.info("listening on \(Self.baseURL(host: configuration.host, port: port))")
    }

    /// `http://127.0.0.1:8080`, with IPv6 literals in brackets.
    public var baseURL: String { Self.baseURL(host: host, port: port) }

    public var openConnections: Int { core.connectionCount }
    /// Connections closed at once because `maxConnections` were open, or
    /// `maxConnectionsPerIP` from their address.
    public var refusedConnections: Int { core.refusedConnectionCount }
    /// Bytes of the body budget reserved by requests being received.
    public var bodyMemoryInUse: Int { core.bodyMemory.inUse }
    /// Requests whose body waits for memory from the budget.
    public var bodiesWaitingForMemory: Int { core.bodyMemory.waiting }
    /// Requests that moved to the heavy lane and wait for one of its threads: their wait
    /// toward `heavyQueueWait` has begun.
    public var heavyLaneWaiting: Int { core.heavyWorkers.waitingJobs }

    private static func baseURL(host: String, port: Int) -> String {
        let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "http://\(shown):\(port)"
    }

    /// Stops accepting, closes idle connections and ends streams, lets requests in flight
    /// (their head has arrived) receive their body and their answer within the grace
    /// period, then closes every connection. Returns once that is done; a second call
    /// returns at once.
    public func stop() {
        guard core.beginStopping() else { return }
        loops.forEach { $0.perform(.stopAccepting) }
        loops.first?.perform(.acceptBacklog)
        Socket.close(listener)
        loops.forEach { $0.perform(.closeIdleConnections) }
        let finished = core.waitForRequests(timeout: core.configuration.shutdownGracePeriod)
        if !finished {
            core.logger.warning("requests still running at the end of the grace period; closing their connections")
        }
        loops.forEach { $0.perform(.closeAllConnections) }
        loops.forEach { $0.perform(.exit) }
        if finished {
            core.workers.stop()
            core.heavyWorkers.stop()
            if core.coalescingWorkers !== core.workers { core.coalescingWorkers.stop() }
        }
        core.logger.info("stopped")
    }
}
