import Dispatch
import Foundation
import HTTP
import Postgres
@testable import PostsServer
import Synchronization
import Testing
import TestSupport

/// A push receiver on loopback, as a gateway such as gorush would be: the project's own
/// HTTP server with one route, `POST /push`, that records each request and answers 200, or
/// 500 to the first `failing` requests, or 410 with `{"invalid_tokens":[…]}` to the next
/// one after `reportInvalid`. It can be stopped and started again on its port.
final class PushReceiver: Sendable {
    struct Received: Sendable {
        let contentType: String?
        let signature: String?
        let delivery: String?
        let userAgent: String?
        let body: [UInt8]

        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        }
    }

    private struct State {
        var received: [Received] = []
        var failuresLeft: Int
        var server: Server?
        /// While set, each request is recorded, then held until it is signalled.
        var hold: DispatchSemaphore?
        /// Said in a 410 to the next request, as a gateway reports uninstalled apps.
        var invalidTokens: [String]?
    }

    /// What the route and the test share (the route holds this, not the receiver).
    private final class Shared: Sendable {
        let state: Mutex<State>
        init(failing: Int) { state = Mutex(State(failuresLeft: failing)) }
    }

    private let shared: Shared
    let port: Int

    init(failing: Int = 0) throws {
        shared = Shared(failing: failing)
        let server = try Self.makeServer(port: 0, shared: shared)
        port = server.port
        shared.state.withLock { $0.server = server }
    }

    deinit { stop() }

    /// `PUSH_WEBHOOK_URL` for this receiver.
    var url: String { "http://127.0.0.1:\(port)/push" }

    var received: [Received] { shared.state.withLock { $0.received } }

    func stop() {
        shared.state.withLock { $0.server }?.stop()
        shared.state.withLock { $0.server = nil }
    }

    /// On the same port again (the sender's URL still names it).
    func start() throws {
        let server = try Self.makeServer(port: port, shared: shared)
        shared.state.withLock { $0.server = server }
    }

    /// The next request is answered 410 `{"invalid_tokens": tokens}`.
    func reportInvalid(_ tokens: [String]) {
        shared.state.withLock { $0.invalidTokens = tokens }
    }

    /// From now on each request is recorded and then held until the semaphore is signalled.
    func holdRequests(until release: DispatchSemaphore) {
        shared.state.withLock { $0.hold = release }
    }

    /// At least `count` requests, or nil if they did not come within `timeout`.
    func waitFor(_ count: Int, timeout: Duration = .seconds(20)) -> [Received]? {
        eventuallyValue(timeout: timeout) {
            let received = self.received
            return received.count >= count ? received : nil
        }
    }

    private static func makeServer(port: Int, shared: Shared) throws -> Server {
        try TestHTTPServer.start(configure: { $0.port = port }) { router in
            router.post("/push") { request, _ in
                let received = Received(contentType: request.headers["Content-Type"],
                                        signature: request.headers["X-Posts-Signature"],
                                        delivery: request.headers["X-Posts-Delivery"],
                                        userAgent: request.headers["User-Agent"], body: request.body)
                let (fails, hold, invalid) = shared.state.withLock { state in
                    state.received.append(received)
                    defer { state.failuresLeft = max(0, state.failuresLeft - 1); state.invalidTokens = nil }
                    return (state.failuresLeft > 0, state.hold, state.invalidTokens)
                }
                _ = hold?.wait(timeout: .now() + 30)
                if let invalid {
                    let body = try JSONSerialization.data(withJSONObject: ["invalid_tokens": invalid])
                    return Response.json(Array(body), status: HTTPStatus(410, "Gone"))
                }
                return fails ? Response.json(Array(#"{"error":"try later"}"#.utf8), status: .internalServerError)
                             : Response.json(Array(#"{"ok":true}"#.utf8))
            }
        }
    }
}

/// The application with its push sender posting to a receiver, and what the push tests
/// read back from its database.
enum PushTestSupport {
    static let secret = "s3cret-for-tests"

    static func start(pushingTo receiver: PushReceiver?, clock: ServerClock = ServerClock()) throws -> Application {
        let push = try receiver.flatMap { try PushSettings.parse(url: $0.url, secret: secret) }
        return try TestApplication.start(clock: clock) { $0.push = push }
    }

    struct Row {
        let notificationID: Int64
        let deliveryID: String
        let attempts: Int
        let failed: Bool
        let lastError: String?
    }

    /// The push jobs still queued or dead, oldest first.
    static func outbox(in app: Application) throws -> [Row] {
        try app.pool.withConnection { connection in
            try connection.query("""
                SELECT (payload ->> 'notification_id')::bigint AS notification_id, payload ->> 'delivery_id' AS delivery_id,
                       attempts, state = 'dead' AS failed, last_error
                FROM jobs WHERE kind = 'push.deliver' ORDER BY id
                """).rows.map { row in
                Row(notificationID: try row.decode("notification_id"), deliveryID: try row.decode("delivery_id"),
                    attempts: try row.decode("attempts"), failed: try row.decode("failed"), lastError: try row.decode("last_error"))
            }
        }
    }

    /// Polls the outbox until `condition` holds (20 s at most).
    static func waitForOutbox(in app: Application, _ condition: ([Row]) -> Bool) throws -> [Row]? {
        try eventuallyValue(timeout: .seconds(20)) {
            let rows = try outbox(in: app)
            return condition(rows) ? rows : nil
        }
    }

    static func count(_ table: String, in app: Application) throws -> Int {
        try app.pool.withConnection { connection in
            try connection.query("SELECT count(*) AS n FROM \(unsafeSQL: table)").firstRow().decode("n")
        }
    }
}

extension APIClient {
    @discardableResult
    func pushToken(_ platform: String, _ token: String, device: String? = nil, method: String = "PUT") throws -> RawHTTPClient.Response {
        var fields: [String: Any?] = ["platform": platform, "token": token]
        if let device { fields["device_id"] = device }
        return try send(method, "/api/me/push-tokens", json: fields)
    }

    func username() throws -> String {
        try #require((try get("/api/me").json["profile"] as? [String: Any])?["username"] as? String)
    }
}
