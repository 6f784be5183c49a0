import HTTP
import Logging
import PostsServer

/// Starts an HTTP server on a free loopback port for one test, with test-sized timeouts.
public enum TestHTTPServer {
    public static func start(
        host: String = "127.0.0.1",
        accessLog: (any AccessLog)? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in },
        routes: (inout Router) -> Void
    ) throws -> Server {
        var configuration = ServerConfiguration(host: host, port: 0)
        configuration.headerTimeout = .seconds(5)
        configuration.idleTimeout = .seconds(10)
        configuration.poller = try TestEventLoop.fromEnvironment()
        // The application's envelope, so that tests read the codes API.md names.
        configuration.errorRenderer = ErrorEnvelope.renderer
        configure(&configuration)
        var router = Router()
        routes(&router)
        var logger = Logger(label: "test-server")
        logger.logLevel = .warning
        return try Server(configuration: configuration, router: router, logger: logger, accessLog: accessLog)
    }
}
