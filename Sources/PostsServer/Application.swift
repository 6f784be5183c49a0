import HTTP
import Logging

/// Wires the routes to their services and runs the HTTP server.
public final class Application: Sendable {
    public let configuration: Configuration
    public let server: Server

    public init(configuration: Configuration, serverConfiguration: ServerConfiguration? = nil, logger: Logger) throws {
        self.configuration = configuration
        var router = Router()
        HealthRoutes.register(on: &router)
        var http = serverConfiguration ?? ServerConfiguration()
        http.host = configuration.host
        http.port = configuration.port
        self.server = try Server(configuration: http, router: router, logger: logger)
    }

    public func stop() {
        server.stop()
    }
}
