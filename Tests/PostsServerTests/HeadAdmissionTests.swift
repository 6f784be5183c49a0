import Foundation
import HTTP
import PostsServer
import Testing
import TestSupport

/// The pipeline's head stages (rate limit, identity) answer an upload from its head: a
/// refused multipart POST of 11 MiB costs no disk, and its answer is the one API.md gives.
@Suite struct HeadAdmissionTests {
    /// The start of an 11 MiB form with a JPEG in it, and the head that declares it whole.
    private static func upload(headers: String) -> (head: String, start: [UInt8]) {
        var form = MultipartBody()
        for (name, value) in [("title", "t"), ("summary", "s"), ("body", "b")] { form.field(name, value) }
        form.file("image", filename: "a.jpg", type: "image/jpeg", jpegBytes(size: 10 * 1024 * 1024 + 512 * 1024))
        let body = form.finished
        let head = "POST /api/posts HTTP/1.1\r\nHost: localhost\r\nContent-Type: \(MultipartBody.contentType)\r\n"
            + "\(headers)Content-Length: \(body.count)\r\n\r\n"
        // What the socket buffers take before the answer: the server must not wait for more.
        return (head, Array(body.prefix(256 * 1024)))
    }

    private static func files(_ app: Application) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: app.configuration.uploadDirectory)) ?? []
    }

    @Test func anUploadWithADeadToken_is401FromItsHead() throws {
        let app = try TestApplication.start { $0.authMode = .token }
        defer { app.stop() }
        // A token of the right shape that was never issued: only the database can tell.
        let token = String(repeating: "A", count: 43)
        let (head, start) = Self.upload(headers: "Authorization: Bearer \(token)\r\nX-Request-Id: dead-token-1\r\n")
        let client = try RawHTTPClient(port: app.server.port)
        try client.send(head)
        try client.send(start)
        let response = try client.readResponse()
        #expect(response.status == 401)
        #expect(response.json["status"] as? String == "error")
        #expect(response.json["error"] as? String == "unauthorized")
        #expect(response.json["message"] as? String == "the token is not valid: it was revoked or never issued")
        #expect(response.header("X-Request-Id") == "dead-token-1")
        #expect(response.header("Connection") == "close")
        #expect(client.waitForClose())
        #expect(Self.files(app).isEmpty)
    }

    @Test func anUploadPastTheRateLimit_is429FromItsHead() throws {
        let app = try TestApplication.start {
            $0.rateLimitPerIP = 1
        }
        defer { app.stop() }
        let client = try RawHTTPClient(port: app.server.port)
        let first = try client.exchange("""
            POST /api/auth/send-code HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
            Content-Length: 27\r\n\r\n{"email":"ash@example.com"}
            """)
        #expect(first.status == 200)
        let (head, start) = Self.upload(headers: "X-User-Email: ash@example.com\r\n")
        try client.send(head)
        try client.send(start)
        let response = try client.readResponse()
        #expect(response.status == 429)
        #expect(response.json["error"] as? String == "rate_limited")
        #expect(response.header("Retry-After").flatMap { Int($0) } != nil)
        #expect(client.waitForClose())
        #expect(Self.files(app).isEmpty)
        let posts: Int = try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM posts").first!.decode("n") }
        #expect(posts == 0)
    }

    /// Behind a trusted balancer the limit is the forwarded client's, decided from the head
    /// all the same: its upload costs no disk, and another client behind it is served.
    @Test func anUploadPastTheRateLimit_behindATrustedProxy_is429FromItsHead() throws {
        let app = try TestApplication.start { configuration in
            configuration.rateLimitPerIP = 1
            configuration.trustedProxies = try! TrustedProxies(parsing: "127.0.0.1")
        }
        defer { app.stop() }
        let client = try RawHTTPClient(port: app.server.port)
        let first = try client.exchange("""
            POST /api/auth/send-code HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: 198.51.100.1\r\n\
            Content-Type: application/json\r\nContent-Length: 27\r\n\r\n{"email":"ash@example.com"}
            """)
        #expect(first.status == 200)
        let (head, start) = Self.upload(headers: "X-User-Email: ash@example.com\r\nX-Forwarded-For: 198.51.100.1\r\n")
        try client.send(head)
        try client.send(start)
        #expect(try client.readResponse().status == 429)
        #expect(client.waitForClose())
        #expect(Self.files(app).isEmpty)
        let other = try APIClient(port: app.server.port).send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b"],
                                                               headers: ["X-User-Email": "brock@example.com", "X-Forwarded-For": "198.51.100.2"])
        #expect(other.status == 201)
    }

    /// A small request whose body is already in: admission runs with the handler, and a
    /// refusal keeps the connection, as it always did.
    @Test func aSmallRequestWithADeadToken_is401AndTheConnectionStays() throws {
        let app = try TestApplication.start { $0.authMode = .token }
        defer { app.stop() }
        let client = try RawHTTPClient(port: app.server.port)
        let body = #"{"title":"t","summary":"s","body":"b"}"#
        for _ in 0..<2 {
            let response = try client.exchange("""
                POST /api/posts HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(String(repeating: "B", count: 43))\r\n\
                Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)
                """)
            #expect(response.status == 401)
            #expect(response.header("Connection") == nil)
        }
    }
}
