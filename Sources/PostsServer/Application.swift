import HTTP
import Logging
import Postgres

/// Wires the routes to their services over one connection pool and runs the HTTP server.
public final class Application: Sendable {
    public let configuration: Configuration
    public let server: Server
    public let pool: ConnectionPool

    /// Starts serving at once (migrations are the caller's business, see `Migrations`).
    /// `accessLog` defaults to lines on standard output in the configured format.
    public init(configuration: Configuration, logger: Logger, accessLog: (any AccessLog)? = nil,
                adjustServer: (inout ServerConfiguration) -> Void = { _ in }) throws {
        try configuration.validate()
        guard let databaseURL = configuration.databaseURL else { throw Configuration.Invalid.missingDatabaseURL }
        self.configuration = configuration
        pool = ConnectionPool(ConnectionPool.Configuration(conninfo: databaseURL, size: configuration.databasePoolSize))

        var router = Router()
        HealthRoutes.register(on: &router, pool: pool)

        var http = ServerConfiguration(host: configuration.host, port: configuration.port)
        // Handlers beyond the pool's size wait for a connection with a timeout (503), and a
        // request that needs no database still finds a free thread.
        http.workerThreads = configuration.databasePoolSize + 4
        adjustServer(&http)
        server = try Server(configuration: http, router: router, logger: logger,
                            accessLog: accessLog ?? LineAccessLog(format: configuration.logFormat))
    }

    /// Finishes the requests in flight, then closes the pool.
    public func stop() {
        server.stop()
        pool.close()
    }
}
