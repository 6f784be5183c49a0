import Dispatch
import Foundation
import Synchronization
import PostsServer
import Testing
import TestSupport

/// Profiles over HTTP, in trust mode: `X-User-Email` names the caller.
@Suite struct ProfileTests {
    private static func client(_ app: Application, as email: String) throws -> APIClient {
        let client = try APIClient(port: app.server.port)
        client.headers["X-User-Email"] = email
        return client
    }

    private static func me(_ client: APIClient) throws -> [String: Any] {
        try #require(client.get("/api/me").json["profile"] as? [String: Any])
    }

    @Test func newUsers_getUniqueUsernamesFromTheirEmail() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let names = try ["ash@a.example", "Ash@b.example", "ash@c.example", "x@d.example", "Zoë.Ünal+news@e.example",
                         "ü@f.example"].map { try Self.me(Self.client(app, as: $0))["username"] as? String }
        #expect(names == ["ash", "ash2", "ash3", "x__", "zo.nalnews", "user"])
    }

    @Test func profile_isReadByUserID_and404Otherwise() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try Self.client(app, as: "ash@example.com")
        let userID = try #require(Self.me(ash)["user_id"] as? Int)
        let anonymous = try APIClient(port: app.server.port)
        let profile = try anonymous.get("/api/profiles/\(userID)")
        #expect(profile.status == 200)
        #expect((profile.json["profile"] as? [String: Any])?["username"] as? String == "ash")
        #expect(try anonymous.get("/api/profiles/999999").status == 404)
        #expect(try anonymous.get("/api/profiles/abc").status == 404)
    }

    @Test func patch_changesOnlyWhatItNames_andNullClearsTheAvatar() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try Self.client(app, as: "ash@example.com")
        let changed = try ash.send("PATCH", "/api/profiles/me", json: [
            "username": "ash.k", "full_name": "  Ash Ketchum  ", "bio": "Trainer", "avatar_url": "/uploads/9f86d081884c7d65.jpg",
        ])
        #expect(changed.status == 200, "\(changed.text)")
        let profile = try #require(changed.json["profile"] as? [String: Any])
        #expect(profile["username"] as? String == "ash.k")
        #expect(profile["full_name"] as? String == "Ash Ketchum")
        #expect(profile["avatar_url"] as? String == "/uploads/9f86d081884c7d65.jpg")

        let bioOnly = try ash.send("PATCH", "/api/profiles/me", json: ["bio": "Still a trainer"])
        let afterBio = try #require(bioOnly.json["profile"] as? [String: Any])
        #expect(afterBio["full_name"] as? String == "Ash Ketchum" && afterBio["bio"] as? String == "Still a trainer")
        #expect(afterBio["avatar_url"] as? String == "/uploads/9f86d081884c7d65.jpg")

        let cleared = try ash.send("PATCH", "/api/profiles/me", json: ["avatar_url": nil])
        #expect((cleared.json["profile"] as? [String: Any])?["avatar_url"] is NSNull)
        #expect(try ash.send("PATCH", "/api/profiles/me", json: ["avatar_url": "https://cdn.example.com/a.png"]).status == 200)
    }

    @Test func usernameTakenInAnyCase_is409() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        _ = try Self.me(Self.client(app, as: "ash@example.com"))
        let blair = try Self.client(app, as: "blair@example.com")
        let taken = try blair.send("PATCH", "/api/profiles/me", json: ["username": "ash"])
        #expect(taken.status == 409)
        #expect(taken.json["error"] as? String == "conflict")
        // Keeping one's own name is no conflict.
        #expect(try blair.send("PATCH", "/api/profiles/me", json: ["username": "blair"]).status == 200)
    }

    @Test func invalidFields_are422_wrongTypes400() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try Self.client(app, as: "ash@example.com")
        let invalid: [[String: Any?]] = [
            ["username": "ab"], ["username": String(repeating: "a", count: 31)], ["username": "Ash"], ["username": "a b c"],
            ["full_name": String(repeating: "x", count: 101)], ["bio": String(repeating: "x", count: 501)],
            ["avatar_url": "ftp://example.com/a.png"], ["avatar_url": "/uploads/../etc/passwd"], ["avatar_url": "javascript:alert(1)"],
        ]
        for fields in invalid {
            let response = try ash.send("PATCH", "/api/profiles/me", json: fields)
            #expect(response.status == 422, "\(fields)")
            #expect(response.json["error"] as? String == "validation_failed")
        }
        #expect(try ash.send("PATCH", "/api/profiles/me", json: ["bio": 5]).status == 400)
        #expect(try ash.send("PATCH", "/api/profiles/me", body: Array("[1]".utf8), contentType: "application/json").status == 400)
    }

    /// Lengths are Swift characters after trimming: 100 emoji (each several scalars) fit.
    @Test func lengths_countCharactersNotBytes() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try Self.client(app, as: "ash@example.com")
        let family = String(repeating: "👩‍👩‍👧", count: 100)
        #expect(try ash.send("PATCH", "/api/profiles/me", json: ["full_name": family]).status == 200)
        #expect(try ash.send("PATCH", "/api/profiles/me", json: ["full_name": family + "x"]).status == 422)
        #expect(try ash.send("PATCH", "/api/profiles/me", json: ["bio": "  \(String(repeating: "é", count: 500))  "]).status == 200)
    }
}

@Suite struct TrustModeTests {
    @Test func trustMode_namesUsersByHeaderOrBodyField_creatingThemOnFirstSight() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let me = try client.get("/api/me", headers: ["X-User-Email": "New.User@Example.com"])
        #expect(me.status == 200)
        #expect((me.json["user"] as? [String: Any])?["email"] as? String == "new.user@example.com")
        // The body's email field names the caller too.
        let patched = try client.send("PATCH", "/api/profiles/me", json: ["email": "new.user@example.com", "bio": "hi"])
        #expect(patched.status == 200)
        #expect((patched.json["profile"] as? [String: Any])?["username"] as? String == "new.user")
        let users: Int = try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM users").first!.decode("n") }
        #expect(users == 1)
    }

    @Test func tokenMode_ignoresTheTrustHeadersAndHasNoDevRoutes() throws {
        let app = try TestApplication.start { $0.authMode = .token }
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        #expect(try client.get("/api/me", headers: ["X-User-Email": "ash@example.com"]).status == 401)
        #expect(try client.send("PATCH", "/api/profiles/me", json: ["email": "ash@example.com", "bio": "x"]).status == 401)
        #expect(try client.get("/api/dev/mailbox?email=ash@example.com").status == 404)
        let users: Int = try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM users").first!.decode("n") }
        #expect(users == 0)
    }

    /// First sight from many requests at once: one user per email, one unique username each.
    @Test func concurrentFirstRequests_createEachUserOnce() throws {
        let app = try TestApplication.start { $0.databasePoolSize = 8 }
        defer { app.stop() }
        let port = app.server.port
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 24) { index in
            let email = index < 12 ? "same@example.com" : "same@host\(index).example"
            let status = (try? APIClient(port: port).get("/api/me", headers: ["X-User-Email": email]).status) ?? -1
            statuses.withLock { $0.append(status) }
        }
        #expect(statuses.withLock { $0 }.allSatisfy { $0 == 200 })
        try app.pool.withConnection { connection in
            let counts = try connection.query("""
                SELECT (SELECT count(*) FROM users) AS users, (SELECT count(*) FROM profiles) AS profiles,
                       (SELECT count(DISTINCT lower(username)) FROM profiles) AS names
                """).first!
            #expect(try counts.decode("users", as: Int.self) == 13)
            #expect(try counts.decode("profiles", as: Int.self) == 13)
            #expect(try counts.decode("names", as: Int.self) == 13)
        }
    }

    @Test func trustIsOffByDefault() throws {
        #expect(try Configuration.fromEnvironment([:]).authMode == .token)
    }

    @Test func devMailbox_showsTheOutboxNewestFirst_soUITestsCanSignIn() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        for _ in 0..<2 { _ = try client.send("POST", "/api/auth/send-code", json: ["email": "ui@example.com"]) }
        let mailbox = try client.get("/api/dev/mailbox?email=UI%40example.com")
        #expect(mailbox.status == 200)
        let messages = try #require(mailbox.json["messages"] as? [[String: Any]])
        #expect(messages.count == 2)
        #expect(messages.allSatisfy { $0["to"] as? String == "ui@example.com" && $0["created_at"] is String })
        let newest = try #require(messages.first?["body"] as? String)
        let code = try #require(newest.firstMatch(of: /\b[0-9]{6}\b/)).output.description
        #expect(code == (try AuthTests.latestCode(for: "ui@example.com", in: app)))
        let verified = try client.send("POST", "/api/auth/verify-code", json: ["email": "ui@example.com", "code": code])
        #expect(verified.status == 200)
        #expect(try client.get("/api/dev/mailbox").status == 422)
    }
}
