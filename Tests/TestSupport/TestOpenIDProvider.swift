import HTTP
import Locking
import Synchronization

/// A local OpenID provider for the sign-in tests: an HTTP server on a loopback port that
/// serves a discovery document and the JWKS of keys made at test time, and signs ID tokens
/// with them. Its keys can be rotated (the old ones no longer published), and it can be
/// stopped and started again on the same port (an outage), or made to answer 503 at once.
public final class TestOpenIDProvider: Sendable {
    private let current: ParkingLock<TestSigningKeys>
    private let server: ParkingLock<Server?>
    public let port: Int
    /// Requests for the key set, so a test can tell a fetch happened (or not).
    private let keySetFetches = Counter()

    /// While set, every request is answered 503 (a provider failing fast).
    private let failing = Flag()

    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    private final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    public var issuer: String { "http://127.0.0.1:\(port)" }
    public var keys: TestSigningKeys { current.withLock { $0 } }
    public var keySetRequests: Int { keySetFetches.value.load(ordering: .relaxed) }

    public init() throws {
        current = ParkingLock(try TestSigningKeys())
        server = ParkingLock(nil)
        let started = try Self.serve(current: current, fetches: keySetFetches, failing: failing, port: 0)
        port = started.port
        server.withLock { $0 = started }
    }

    /// New keys with new ids; the old ones are no longer published.
    public func rotateKeys() throws {
        let fresh = try TestSigningKeys()
        current.withLock { $0 = fresh }
    }

    /// The provider goes away: its port refuses connections.
    public func stop() {
        server.withLock { server in
            server?.stop()
            server = nil
        }
    }

    /// Every request answered 503 (true) or served again (false).
    public func setFailing(_ on: Bool) {
        failing.value.store(on, ordering: .relaxed)
    }

    /// Back on the same port.
    public func start() throws {
        let started = try Self.serve(current: current, fetches: keySetFetches, failing: failing, port: port)
        server.withLock { $0 = started }
    }

    private static func serve(current: ParkingLock<TestSigningKeys>, fetches: Counter, failing: Flag, port: Int) throws -> Server {
        // (The server is made before its port is known; the handlers read it from the request.)
        try TestHTTPServer.start(configure: { $0.port = port }) { router in
            router.get("/.well-known/openid-configuration") { request, _ in
                if failing.value.load(ordering: .relaxed) { return Response.json(Array(#"{"error":"down"}"#.utf8), status: .serviceUnavailable) }
                let host = request.headers["Host"] ?? "127.0.0.1"
                let document = #"{"issuer":"http://\#(host)","jwks_uri":"http://\#(host)/jwks","id_token_signing_alg_values_supported":["RS256","ES256"]}"#
                return Response.json(Array(document.utf8))
            }
            router.get("/jwks") { _, _ in
                fetches.value.add(1, ordering: .relaxed)
                var response = Response.json(try current.withLock { try $0.jwks() })
                response.headers.add("Cache-Control", "public, max-age=3600")
                return response
            }
        }
    }

    deinit { stop() }
}
