import Foundation
import PostsServer
import Testing
import TestSupport

/// Trust mode's own guards: it believes a named email, so what may name one is narrow.
@Suite struct TrustModeGuardTests {
    /// The email is the credential in trust mode: one that is no address is 401, like a
    /// malformed token, not a validation error of the route.
    @Test func aMalformedEmail_is401() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let header = try client.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b"], headers: ["X-User-Email": "junk"])
        #expect(header.status == 401 && header.json["error"] as? String == "unauthorized")
        let field = try client.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b", "email": "junk"])
        #expect(field.status == 401)
        // A route that takes an email as its input still judges it itself.
        #expect(try client.send("POST", "/api/auth/send-code", json: ["email": "junk"]).status == 422)
        #expect(try client.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b"], headers: ["X-User-Email": "a@example.com"])
            .status == 201)
    }

    /// Found by the security review: any web page in the developer's browser could post
    /// as anyone, or wipe the database, with a form aimed at the loopback port.
    @Test func aRequestFromAnotherSitesPage_is403_andNothingChanges() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let form = Array("email=victim%40example.com&title=Hello&summary=s&body=b".utf8)
        for origin in ["http://evil.example", "https://127.0.0.1.evil.example", "http://localhost.evil.example", "null"] {
            let post = try client.send("POST", "/api/posts", body: form, contentType: "application/x-www-form-urlencoded",
                                       headers: ["Origin": origin])
            #expect(post.status == 403 && post.json["error"] as? String == "forbidden", "\(origin)")
            #expect(try client.send("POST", "/api/dev/reset", json: [:], headers: ["Origin": origin]).status == 403)
        }
        #expect((try client.get("/api/posts/recent").json["posts"] as? [Any])?.count == 0)
        // This machine's pages, and clients that send no Origin (apps, tests), are served.
        for origin in ["http://localhost:3000", "http://127.0.0.1:8080", "http://[::1]:5173", "http://app.localhost:3000"] {
            let post = try client.send("POST", "/api/posts", body: form, contentType: "application/x-www-form-urlencoded",
                                       headers: ["Origin": origin])
            #expect(post.status == 201, "\(origin)")
        }
        #expect(try client.send("POST", "/api/posts", body: form, contentType: "application/x-www-form-urlencoded").status == 201)
    }

    /// A post in trust mode addressed to `host`, as a browser page would send it.
    private static func post(to host: String, port: Int) throws -> RawHTTPClient.Response {
        let body = #"{"title":"t","summary":"s","body":"b"}"#
        return try RawHTTPClient(port: port).exchange("""
            POST /api/posts HTTP/1.1\r\nHost: \(host)\r\nX-User-Email: victim@example.com\r\n\
            Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)
            """)
    }

    /// DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1 is
    /// same-origin with its own requests, and may send no Origin; its Host gives it away.
    @Test func aRequestForAnotherHost_is403_andNothingChanges() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        for host in ["evil.example", "evil.example:8080", "127.0.0.1.nip.io:8080", "localhost.evil.example",
                     "[2001:db8::1]:80", "192.0.2.1", "0.0.0.0:8080", "localhost:80x", "[::1", "localhost."] {
            let post = try Self.post(to: host, port: app.server.port)
            #expect(post.status == 403 && post.json["error"] as? String == "forbidden", "\(host)")
            // Reads too: the page could read the answers.
            let read = try RawHTTPClient(port: app.server.port).exchange("GET /api/posts/recent HTTP/1.1\r\nHost: \(host)\r\n\r\n")
            #expect(read.status == 403, "\(host)")
        }
        #expect((try APIClient(port: app.server.port).get("/api/posts/recent").json["posts"] as? [Any])?.count == 0)
    }

    /// This machine by name or by address, with or without a port, as the dev workflow and
    /// clients name it.
    @Test func aRequestForThisMachine_isServed() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        for host in ["localhost", "localhost:8080", "LocalHost:8080", "app.localhost:3000", "127.0.0.1", "127.0.0.1:8080",
                     "127.1.2.3:80", "[::1]", "[::1]:8080", "::1", "localhost:"] {
            #expect(try Self.post(to: host, port: app.server.port).status == 201, "\(host)")
        }
        // HTTP/1.0 may leave Host out (no browser does); HTTP/1.1 may not.
        #expect(try RawHTTPClient(port: app.server.port).exchange("GET /api/ping HTTP/1.0\r\n\r\n").status == 200)
        #expect(try RawHTTPClient(port: app.server.port).exchange("GET /api/ping HTTP/1.1\r\n\r\n").status == 400)
    }

    @Test func anyHost_isServedWithTrustAnyHost_orInTokenMode() throws {
        let anyHost = try TestApplication.start { $0.trustAnyHost = true }
        defer { anyHost.stop() }
        #expect(try Self.post(to: "evil.example:8080", port: anyHost.server.port).status == 201)
        let token = try TestApplication.start { $0.authMode = .token }
        defer { token.stop() }
        #expect(try RawHTTPClient(port: token.server.port).exchange("GET /api/ping HTTP/1.1\r\nHost: api.example.com\r\n\r\n")
            .status == 200)
    }

    /// With TRUST_ANY_HOST the operator serves other machines on purpose: their pages too.
    @Test func trustAnyHost_takesEveryOrigin() throws {
        let app = try TestApplication.start { $0.trustAnyHost = true }
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let post = try client.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b", "email": "a@example.com"],
                                   headers: ["Origin": "http://192.0.2.10:3000"])
        #expect(post.status == 201)
    }
}
