import Dispatch
import Logging

/// The HTTP/1.1 server: accepts connections, spreads them over the I/O loops, and stops
/// gracefully.
public final class Server: Sendable {
    private let core: ServerCore
    private let loops: [IOLoop]
    private let acceptor: Acceptor
    /// The port actually bound (useful when the configuration asked for 0).
    public let port: Int
    public let host: String

    /// Binds and starts serving at once; logs `listening on http://HOST:PORT`.
    public init(configuration: ServerConfiguration, router: Router, logger: Logger) throws {
        Socket.raiseOpenFileLimit()
        let (listener, port) = try Socket.listen(host: configuration.host, port: configuration.port)
        self.port = port
        self.host = configuration.host
        core = ServerCore(configuration: configuration, router: router, logger: logger)
        loops = (0..<max(1, configuration.ioQueues)).map { IOLoop(label: "http-io-\($0)") }
        let sweep = min(configuration.headerTimeout, configuration.idleTimeout, .seconds(1)) / 4
        for loop in loops { loop.startSweeping(every: max(sweep, .milliseconds(5))) }
        acceptor = Acceptor(listener: listener, loops: loops, core: core)
        acceptor.start()
        logger.info("listening on \(Self.baseURL(host: configuration.host, port: port))")
    }

    /// `http://127.0.0.1:8080`, with IPv6 literals in brackets.
    public var baseURL: String { Self.baseURL(host: host, port: port) }

    public var openConnections: Int { core.connectionCount }

    private static func baseURL(host: String, port: Int) -> String {
        let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "http://\(shown):\(port)"
    }

    /// Stops accepting, lets requests in flight finish (up to the grace period), then
    /// closes every connection. Returns once that is done.
    public func stop() {
        guard !core.isStopping else { return }
        core.beginStopping()
        acceptor.stop()
        for loop in loops { loop.forEachConnection { $0.beginShutdown() } }
        let finished = core.waitForRequests(timeout: core.configuration.shutdownGracePeriod)
        if !finished {
            core.logger.warning("requests still running at the end of the grace period; closing their connections")
        }
        for loop in loops {
            loop.forEachConnection { $0.close() }
            loop.stopSweeping()
            loop.queue.sync {}
        }
        if finished { core.workers.stop() }
        core.logger.info("stopped")
    }
}
