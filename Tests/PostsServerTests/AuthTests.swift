import Foundation
import Postgres
import PostsServer
import Testing
import TestSupport

/// Email-code sign-in end to end, in token mode (the default), reading codes from the
/// outbox as a mailer would.
@Suite struct AuthTests {
    private static func start() throws -> Application {
        try TestApplication.start { $0.authMode = .token }
    }

    /// The code of the newest message to `email` in the outbox.
    static func latestCode(for email: String, in app: Application) throws -> String {
        let body: String = try app.pool.withConnection { connection in
            try connection.query("""
                SELECT body FROM outbox WHERE recipient = \(email) ORDER BY created_at DESC, id DESC LIMIT 1
                """).first!.decode("body")
        }
        return try #require(body.firstMatch(of: /\b[0-9]{6}\b/)).output.description
    }

    /// Signs in through the real flow (from a named device, if given) and returns the token.
    static func signIn(_ email: String, device: String? = nil, in app: Application, client: APIClient) throws -> String {
        #expect(try client.send("POST", "/api/auth/send-code", json: ["email": email]).status == 200)
        var body: [String: Any] = ["email": email, "code": try latestCode(for: email, in: app)]
        if let device { body["device_id"] = device }
        let verified = try client.send("POST", "/api/auth/verify-code", json: body)
        #expect(verified.status == 200, "\(verified.text)")
        return try #require(verified.json["token"] as? String)
    }

    @Test func wholeFlow_signsInReadsMeAndLogsOut() throws {
        let app = try Self.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let sent = try client.send("POST", "/api/auth/send-code", json: ["email": " Ash@Example.com "])
        #expect(sent.status == 200)
        #expect(sent.text == #"{"status":"success"}"#)
        let code = try Self.latestCode(for: "ash@example.com", in: app)

        let verified = try client.send("POST", "/api/auth/verify-code",
                                       json: ["email": "ash@example.com", "code": code, "device_id": "iPhone-1"])
        #expect(verified.status == 200)
        #expect(verified.json["is_new_user"] as? Bool == true)
        #expect(verified.json["email"] as? String == "ash@example.com")
        let token = try #require(verified.json["token"] as? String)
        #expect(token.count == 43)
        let userID = try #require(verified.json["user_id"] as? Int)

        client.headers["Authorization"] = "Bearer \(token)"
        let me = try client.get("/api/me")
        #expect(me.status == 200)
        let user = try #require(me.json["user"] as? [String: Any])
        #expect(user["id"] as? Int == userID && user["email"] as? String == "ash@example.com")
        let profile = try #require(me.json["profile"] as? [String: Any])
        #expect(profile["username"] as? String == "ash")
        #expect(profile["user_id"] as? Int == userID)
        #expect(profile["full_name"] as? String == "" && profile["bio"] as? String == "")
        #expect(profile.keys.contains("avatar_url") && profile["avatar_url"] is NSNull)
        #expect((profile["created_at"] as? String)?.firstMatch(of: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) != nil)

        #expect(try client.send("POST", "/api/auth/logout").status == 200)
        let after = try client.get("/api/me")
        #expect(after.status == 401)
        #expect(after.json["error"] as? String == "unauthorized")

        // Signing in again finds the same user.
        client.headers = [:]
        _ = try client.send("POST", "/api/auth/send-code", json: ["email": "ash@example.com"])
        let again = try client.send("POST", "/api/auth/verify-code",
                                    json: ["email": "ash@example.com", "code": try Self.latestCode(for: "ash@example.com", in: app)])
        #expect(again.json["is_new_user"] as? Bool == false)
        #expect(again.json["user_id"] as? Int == userID)
    }

    @Test func missingOrBadCredentials_are401() throws {
        let app = try Self.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let wellFormedButUnknown = String(repeating: "A", count: 43)
        let cases: [(String, String, [String: String])] = [
            ("GET", "/api/me", [:]),
            ("GET", "/api/me", ["Authorization": "Basic YTpi"]),
            ("GET", "/api/me", ["Authorization": "Bearer"]),
            ("GET", "/api/me", ["Authorization": "Bearer not-a-token"]),
            ("GET", "/api/me", ["Authorization": "Bearer \(wellFormedButUnknown)"]),
            ("POST", "/api/auth/logout", [:]),
            ("PATCH", "/api/profiles/me", [:]),
        ]
        for (method, path, headers) in cases {
            let response = try client.send(method, path, json: method == "PATCH" ? ["bio": "x"] : nil, headers: headers)
            #expect(response.status == 401, "\(method) \(path) \(headers)")
            #expect(response.json["error"] as? String == "unauthorized")
        }
        // A public route refuses a dead token too, rather than quietly serving a stranger.
        let profile = try client.get("/api/profiles/1", headers: ["Authorization": "Bearer \(wellFormedButUnknown)"])
        #expect(profile.status == 401)
    }

    @Test func wrongCodes_countAttempts_andFiveKillTheCode() throws {
        let app = try Self.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        _ = try client.send("POST", "/api/auth/send-code", json: ["email": "blair@example.com"])
        let code = try Self.latestCode(for: "blair@example.com", in: app)
        let wrong = code == "000000" ? "000001" : "000000"
        for _ in 0..<5 {
            let response = try client.send("POST", "/api/auth/verify-code", json: ["email": "blair@example.com", "code": wrong])
            #expect(response.status == 401)
        }
        let dead = try client.send("POST", "/api/auth/verify-code", json: ["email": "blair@example.com", "code": code])
        #expect(dead.status == 401)
        // A new code works.
        let token = try Self.signIn("blair@example.com", in: app, client: client)
        #expect(!token.isEmpty)
    }

    @Test func aCode_worksOnce() throws {
        let app = try Self.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        _ = try client.send("POST", "/api/auth/send-code", json: ["email": "casey@example.com"])
        let code = try Self.latestCode(for: "casey@example.com", in: app)
        let fields = ["email": "casey@example.com", "code": code]
        #expect(try client.send("POST", "/api/auth/verify-code", json: fields).status == 200)
        #expect(try client.send("POST", "/api/auth/verify-code", json: fields).status == 401)
    }

    @Test func sixthCodeInAnHour_is429WithRetryAfter() throws {
        let app = try Self.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        for _ in 0..<5 {
            #expect(try client.send("POST", "/api/auth/send-code", json: ["email": "dana@example.com"]).status == 200)
        }
        let limited = try client.send("POST", "/api/auth/send-code", json: ["email": "dana@example.com"])
        #expect(limited.status == 429)
        #expect(limited.json["error"] as? String == "rate_limited")
        let wait = try #require(limited.header("Retry-After").flatMap { Int($0) })
        #expect((3500...3600).contains(wait))
        // Another address is not affected.
        #expect(try client.send("POST", "/api/auth/send-code", json: ["email": "erin@example.com"]).status == 200)
    }

    @Test func sendCode_answersAlikeForKnownAndUnknownAddresses() throws {
        let app = try Self.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        _ = try Self.signIn("known@example.com", in: app, client: client)
        let known = try client.send("POST", "/api/auth/send-code", json: ["email": "known@example.com"])
        let unknown = try client.send("POST", "/api/auth/send-code", json: ["email": "nobody@example.com"])
        #expect(known.status == unknown.status)
        #expect(known.body == unknown.body)
        let users: Int = try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM users").first!.decode("n") }
        #expect(users == 1)
    }

    /// Neither a token nor a code is ever stored as itself, in any column of any table.
    @Test func tokensAndCodes_neverAppearInPlaintextInAnyTable() throws {
        let app = try Self.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        _ = try client.send("POST", "/api/auth/send-code", json: ["email": "fay@example.com"])
        let code = try Self.latestCode(for: "fay@example.com", in: app)
        let verified = try client.send("POST", "/api/auth/verify-code", json: ["email": "fay@example.com", "code": code])
        let token = try #require(verified.json["token"] as? String)
        try app.pool.withConnection { connection in
            let tables: [String] = try connection.query("""
                SELECT table_name::text AS name FROM information_schema.tables
                WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
                """).rows.map { try $0.decode("name") }
            #expect(tables.contains("tokens"))
            for table in tables {
                // Table names come from the catalogue, not from input.
                let sql = "SELECT count(*) AS n FROM \(table) t WHERE row_to_json(t)::text LIKE '%' || $1 || '%'"
                let withToken: Int = try connection.query(SQLQuery(unsafeSQL: sql, binds: [token.postgresValue]))
                    .first!.decode("n")
                #expect(withToken == 0, "\(table) holds the token")
                if table != "outbox" {
                    let withCode: Int = try connection.query(SQLQuery(unsafeSQL: sql, binds: [code.postgresValue]))
                        .first!.decode("n")
                    #expect(withCode == 0, "\(table) holds the code")
                }
            }
        }
    }

    /// Resolving a token writes `last_used_at` only when it is over a minute old, not on
    /// every request.
    @Test func tokenUse_isRecordedAtMostOnceAMinute() throws {
        let app = try Self.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        client.headers["Authorization"] = "Bearer \(try Self.signIn("gus@example.com", in: app, client: client))"
        func lastUsed() throws -> PostgresTimestamp {
            try app.pool.withConnection { try $0.query("SELECT last_used_at FROM tokens").first!.decode("last_used_at") }
        }
        try app.pool.withConnection { _ = try $0.query("UPDATE tokens SET last_used_at = now() - interval '2 minutes'") }
        let stale = try lastUsed()
        #expect(try client.get("/api/me").status == 200)
        let refreshed = try lastUsed()
        #expect(refreshed.microsecondsSince2000 > stale.microsecondsSince2000)
        for _ in 0..<3 { #expect(try client.get("/api/me").status == 200) }
        #expect(try lastUsed() == refreshed)
    }

    @Test func invalidFields_are422_andMalformedBodies400() throws {
        let app = try Self.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        #expect(try client.send("POST", "/api/auth/send-code", json: [:]).status == 422)
        #expect(try client.send("POST", "/api/auth/send-code", json: ["email": "not an address"]).status == 422)
        #expect(try client.send("POST", "/api/auth/send-code", json: ["email": 42]).status == 400)
        #expect(try client.send("POST", "/api/auth/send-code", body: Array("{".utf8), contentType: "application/json").status == 400)
        #expect(try client.send("POST", "/api/auth/send-code", body: Array("x".utf8), contentType: "text/plain").status == 415)
        #expect(try client.send("POST", "/api/auth/verify-code", json: ["email": "a@example.com"]).status == 422)
        // A form is accepted as well as JSON.
        let form = try client.send("POST", "/api/auth/send-code", body: Array("email=form%40example.com".utf8),
                                   contentType: "application/x-www-form-urlencoded")
        #expect(form.status == 200)
    }
}
