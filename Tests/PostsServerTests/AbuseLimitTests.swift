import Dispatch
import Foundation
import PostsServer
import Testing
import TestSupport

/// `RATE_LIMIT_IP` and `MAX_STREAMS_PER_IP` end to end, from the loopback address.
@Suite struct AbuseLimitTests {
    @Test func writesPastTheLimit_are429WithRetryAfter_whileReadsGoOn() throws {
        let app = try TestApplication.start { $0.rateLimitPerIP = 3 }
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost().id
        #expect(try ash.send("PUT", "/api/posts/\(post)/like").status == 200)
        #expect(try ash.send("DELETE", "/api/posts/\(post)/like").status == 200)

        let refused = try ash.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b"])
        #expect(refused.status == 429)
        #expect(refused.json["error"] as? String == "rate_limited")
        #expect(refused.json["status"] as? String == "error")
        let retryAfter = try #require(refused.header("Retry-After").flatMap { Int($0) })
        #expect((1...20).contains(retryAfter))

        // Nothing was written by the refused request; reads and ping are never limited.
        #expect(try ash.get("/api/posts?limit=100").json["posts"].map { ($0 as? [Any])?.count } == 1)
        for _ in 0..<10 {
            #expect(try ash.get("/api/posts/\(post)").status == 200)
            #expect(try ash.get("/api/ping").status == 200)
        }
        // The limit is the address's, not the user's.
        let brock = try APIClient.user("brock@example.com", on: app)
        #expect(try brock.send("PUT", "/api/posts/\(post)/like").status == 429)
        // Its minute is the server clock's (API.md "The clock"): advanced, the bucket is full.
        app.clock.advance(by: .seconds(60))
        #expect(try brock.send("PUT", "/api/posts/\(post)/like").status == 200)
    }

    @Test func signIns_countAgainstTheLimit() throws {
        let app = try TestApplication.start {
            $0.authMode = .token
            $0.rateLimitPerIP = 2
        }
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        for index in 0..<2 {
            #expect(try client.send("POST", "/api/auth/send-code", json: ["email": "u\(index)@example.com"]).status == 200)
        }
        let refused = try client.send("POST", "/api/auth/verify-code",
                                      json: ["email": "u0@example.com", "code": "000000"])
        #expect(refused.status == 429)
        #expect(refused.header("Retry-After") != nil)
    }

    /// `MAX_CONNECTIONS_PER_IP`: the next connection from the address is closed at once,
    /// and one that closes gives its place back.
    @Test func connectionsPastTheLimit_areClosedAtOnce() throws {
        let app = try TestApplication.start { $0.maxConnectionsPerIP = 2 }
        defer { app.stop() }
        var held = try (0..<2).map { _ in try APIClient(port: app.server.port) }
        for client in held { #expect(try client.get("/api/ping").status == 200) }
        #expect(try RawHTTPClient(port: app.server.port).waitForClose())
        held.removeFirst()
        #expect(eventually { app.server.openConnections == 1 })
        #expect(try APIClient(port: app.server.port).get("/api/ping").status == 200)
    }

    @Test func streamsPastTheLimit_are429_untilOneCloses() throws {
        let app = try TestApplication.start { $0.maxStreamsPerIP = 2 }
        defer { app.stop() }
        var first: EventStreamClient? = try EventStreamClient(port: app.server.port)
        let second = try EventStreamClient(port: app.server.port)
        #expect(first?.head.status == 200 && second.head.status == 200)

        let refused = try RawHTTPClient(port: app.server.port)
            .exchange("GET /api/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(refused.status == 429)
        #expect(refused.json["error"] as? String == "rate_limited")
        #expect(refused.header("Retry-After") == "2")

        // A client that goes away gives its place back once the server sees it gone.
        first = nil
        let reopened = try eventuallyValue(timeout: .seconds(30)) {
            let attempt = try EventStreamClient(port: app.server.port)
            return attempt.head.status == 200 ? attempt : nil
        }
        #expect(reopened != nil)
        #expect(first == nil)
        _ = second
    }
}
