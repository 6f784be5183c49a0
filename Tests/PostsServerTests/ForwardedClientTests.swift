import Foundation
import HTTP
import PostsServer
import Testing
import TestSupport

/// `TRUSTED_PROXIES` end to end: the test client, on 127.0.0.1, plays the load balancer
/// in front of several clients, or, when it is not trusted, a client that forges the header.
@Suite struct ForwardedClientTests {
    private static var post: [String: Any?] { ["title": "t", "summary": "s", "body": "b"] }

    private static func write(_ client: APIClient, from forwarded: String, requestID: String = UUID().uuidString) throws -> Int {
        try client.send("POST", "/api/posts", json: post, headers: [
            "X-User-Email": "ash@example.com", "X-Forwarded-For": forwarded, "X-Request-Id": requestID,
        ]).status
    }

    @Test func aForgedForwardedFor_fromAnUntrustedPeer_changesNothing() throws {
        let log = RecordingAccessLog()
        let app = try TestApplication.start(accessLog: log) { $0.rateLimitPerIP = 2 }
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        #expect(try Self.write(client, from: "198.51.100.1", requestID: "forged-1") == 201)
        #expect(try Self.write(client, from: "198.51.100.2") == 201)
        // A third address made up: still this one address's third write.
        #expect(try Self.write(client, from: "198.51.100.3") == 429)
        #expect(log.entry(requestID: "forged-1")?.client == "127.0.0.1")
    }

    @Test func behindATrustedProxy_eachForwardedClientHasItsOwnAllowance() throws {
        let log = RecordingAccessLog()
        let app = try TestApplication.start(accessLog: log) { configuration in
            configuration.rateLimitPerIP = 1
            configuration.trustedProxies = try! TrustedProxies(parsing: "127.0.0.1/32")
        }
        defer { app.stop() }
        let balancer = try APIClient(port: app.server.port)
        // What a client wrote itself, left of what our balancer appended, is passed over.
        #expect(try Self.write(balancer, from: "6.6.6.6, 198.51.100.1", requestID: "client-a") == 201)
        #expect(try Self.write(balancer, from: "7.7.7.7, 198.51.100.1", requestID: "client-a-again") == 429)
        #expect(try Self.write(balancer, from: "198.51.100.2", requestID: "client-b") == 201)
        #expect(log.entry(requestID: "client-a")?.client == "198.51.100.1")
        #expect(log.entry(requestID: "client-a-again")?.client == "198.51.100.1")
        #expect(log.entry(requestID: "client-b")?.client == "198.51.100.2")
        // An IPv6 client is counted by its /64.
        #expect(try Self.write(balancer, from: "2001:db8:1:2::10") == 201)
        #expect(try Self.write(balancer, from: "2001:db8:1:2::20") == 429)
    }

    @Test func behindATrustedProxy_eachForwardedClientHasItsOwnStreams() throws {
        let app = try TestApplication.start { configuration in
            configuration.maxStreamsPerIP = 1
            configuration.trustedProxies = try! TrustedProxies(parsing: "127.0.0.0/8")
        }
        defer { app.stop() }
        func stream(from forwarded: String) throws -> EventStreamClient {
            try EventStreamClient(port: app.server.port, headers: ["X-Forwarded-For": forwarded])
        }
        let first = try stream(from: "198.51.100.1")
        #expect(first.head.status == 200)
        #expect(try stream(from: "198.51.100.1").head.status == 429)
        #expect(try stream(from: "198.51.100.2").head.status == 200)
    }
}
