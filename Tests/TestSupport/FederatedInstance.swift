import Foundation
@testable import PostsServer

/// An instance with federation on (API.md "Federation"), whose `PUBLIC_URL` is
/// `http://127.0.0.1:<its port>`: the port is chosen first (one the kernel finds free), then
/// the server starts on it; taken meanwhile by another process, another is tried.
/// `FEDERATION_ALLOW_PRIVATE=1`: its fetches and deliveries may reach loopback.
public enum FederatedInstance {
    public static func start(conninfo: String? = nil, clock: ServerClock = ServerClock(),
                             configure: (inout Configuration) -> Void = { _ in }) throws -> Application {
        var lastError: (any Error)?
        for _ in 0..<20 {
            // A port the kernel found free, given back for the server to take.
            let reserved = try RefusedPort()
            let port = reserved.port
            reserved.close()
            do {
                return try TestApplication.start(conninfo: conninfo, clock: clock) { configuration in
                    configuration.port = port
                    configuration.federation = try? FederationSettings.parse(
                        federation: "on", publicURL: "http://127.0.0.1:\(port)", allowPrivate: "1")
                    configure(&configuration)
                }
            } catch {
                lastError = error
            }
        }
        throw lastError ?? RawHTTPClient.Failure(description: "no free port for a federated instance")
    }

    /// `127.0.0.1:<port>`: the domain in its users' `user@domain`.
    public static func domain(of app: Application) -> String { "127.0.0.1:\(app.server.port)" }
}
