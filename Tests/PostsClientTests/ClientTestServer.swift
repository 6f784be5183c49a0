import Foundation
import PostsClient
import PostsServer
import TestSupport

/// The real server on a port of its own (trust mode unless configured otherwise), and
/// clients of it made as an app makes them.
struct ClientTestServer {
    private(set) var app: Application

    /// Quick retries of transport failures, and the server's 503s with `Retry-After` (the
    /// pool's answer on a loaded machine) waited for as an app would.
    static let fastRetries = RetryPolicy(maxAttempts: 4, initialDelay: .milliseconds(20), maximumDelay: .seconds(3))

    /// `cluster`: `.changes` for a test of the change feed (see `TestDatabase.Cluster`).
    static func start(cluster: TestDatabase.Cluster = .shared,
                      configure: (inout Configuration) -> Void = { _ in }) throws -> ClientTestServer {
        ClientTestServer(app: try TestApplication.start(cluster: cluster, configure: configure))
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(app.server.port)")! }

    func client(token: String? = nil, transport: any HTTPTransport = URLSessionTransport(),
                retryPolicy: RetryPolicy = fastRetries) -> PostsClient {
        PostsClient(baseURL: baseURL, token: token, transport: transport, retryPolicy: retryPolicy)
    }

    /// A client signed in through the email-code flow, the code read from the development
    /// mailbox.
    func signedIn(_ email: String) async throws -> PostsClient {
        let client = client()
        try await client.developmentSignIn(email: email)
        return client
    }

    /// Stops the server (every open stream ends), runs `whileDown`, and starts it again on
    /// the same port and database, as a deploy does.
    mutating func restart(whileDown: () async throws -> Void = {}) async throws {
        let port = app.server.port
        let databaseURL = app.configuration.databaseURL
        let uploads = app.configuration.uploadDirectory
        app.stop()
        try await whileDown()
        app = try TestApplication.start(conninfo: databaseURL) {
            $0.port = port
            $0.uploadDirectory = uploads
        }
    }

    func stop() { app.stop() }
}

/// A post with the required fields filled.
func draft(_ title: String, parent: Int? = nil) -> NewPost {
    NewPost(title: title, summary: "About \(title)", body: "The body of \(title)", parentID: parent, timezone: "Europe/Paris")
}

/// A real PNG, 800 × 600 (left half red, right half blue; 1-bit palette, 309 bytes): the
/// server decodes every upload and makes it again, so a signature alone is refused (415).
let pngBytes = Data(base64Encoded: """
    iVBORw0KGgoAAAANSUhEUgAAAyAAAAJYAQMAAACguBAzAAAABlBMVEXcHh4eHtziEUOOAAAA6klEQVR42u3NMQEAAAwCIPuX3jJ4\
    +UABktrVIpFIJBKJRCKRSCQSiUQikUgkEolEIpFIJBKJRCKRSCQSiUQikUgkEolEIpFIJBKJRCKRSCQSiUQikUgkEolEIpFIJBKJ\
    RCKRSCQSiUQikUgkEolEIpFIJBKJRCKRSCQSiUQikUgkEolEIpFIJBKJRCKRSCQSiUQikUgkEolEIpFIJBKJRCKRSCQSiUQikUgk\
    EolEIpFIJBKJRCKRSCQSiUQikUgkEolEIpFIJBKJRCKRSCQSiUQikUgkEolEIpFIJBKJRCKRSCQSiUQikWyTB752wZ37ERv1AAAA\
    AElFTkSuQmCC
    """)!

/// `[width, height]` from a PNG's header (its IHDR chunk); nil for anything else.
func pngSize(_ data: Data) -> [Int]? {
    let bytes = [UInt8](data)
    guard bytes.count >= 24, bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
          bytes[12..<16].elementsEqual("IHDR".utf8) else { return nil }
    func integer(at offset: Int) -> Int { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
    return [integer(at: 16), integer(at: 20)]
}

struct DeadlinePassed: Error {}

/// Runs `body`, cancelled after `limit`: a bound on how long a test waits for an event,
/// never a pause that hopes something has happened meanwhile. Two minutes: the whole suite
/// runs its tests at once on two cores, where a test's 20 s once passed before its events
/// did (its stream was fine, the machine was busy), and a minute did once in the PgBouncer
/// pass, beside the change storm's 40 writers (a whole test, server start included).
func withDeadline<T: Sendable>(_ limit: Duration = .seconds(120), _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw DeadlinePassed() }
        return value
    }
}
