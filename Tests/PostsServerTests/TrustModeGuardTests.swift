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
