import Foundation
import Postgres
import Synchronization
import PostsServer
import Testing
import TestSupport

/// Sign in with an OpenID provider end to end: a local provider (discovery document and
/// JWKS over HTTP, keys made at test time) and a token-mode server configured for it.
@Suite struct OIDCSignInTests {
    static let clientID = "com.example.app"

    /// `linksByEmail`: the provider marked `local+email` (a loopback issuer is neither
    /// Apple's nor Google's, so by default its verified emails join no account).
    static func start(_ provider: TestOpenIDProvider, blockedWordsFile: String? = nil, linksByEmail: Bool = false) throws -> Application {
        try TestApplication.start { configuration in
            configuration.authMode = .token
            configuration.blockedWordsFile = blockedWordsFile
            configuration.oidcProviders = [OIDCProvider(name: "local", issuer: provider.issuer, clientIDs: [clientID],
                                                        linksByEmail: linksByEmail)]
        }
    }

    static func claims(_ provider: TestOpenIDProvider, _ changes: [String: Any?] = [:]) -> [String: Any] {
        let now = Int64(Date().timeIntervalSince1970)
        var claims: [String: Any] = ["iss": provider.issuer, "sub": "sub-1", "aud": clientID, "exp": now + 600, "iat": now,
                                     "email": "ash@example.com", "email_verified": true]
        for (name, value) in changes { claims[name] = value }
        return claims
    }

    static func count(_ table: String, in app: Application) throws -> Int64 {
        try app.pool.withConnection {
            try $0.query("SELECT count(*)::int8 AS n FROM \(unsafeSQL: table)").firstRow().decode("n", as: Int64.self)
        }
    }

    static func userID(_ email: String, in app: Application) throws -> Int? {
        try app.pool.withConnection { try $0.query("SELECT id FROM users WHERE email = \(email)").first?.decode("id", as: Int64.self) }
            .map(Int.init)
    }

    /// `bearer`: signed in as that account's token (a link).
    static func signIn(_ client: APIClient, _ token: String, nonce: String? = nil, bearer: String? = nil) throws -> RawHTTPClient.Response {
        try client.send("POST", "/api/auth/oidc", json: ["provider": "local", "id_token": token, "nonce": nonce],
                        headers: bearer.map { ["Authorization": "Bearer \($0)"] } ?? [:])
    }

    @Test func aFirstSignInCreatesTheUser_andTheNextFindsThem() throws {
        let provider = try TestOpenIDProvider()
        defer { provider.stop() }
        let app = try Self.start(provider, linksByEmail: true)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let first = try Self.signIn(client, provider.keys.token(Self.claims(provider, ["email": "new@example.com"])))
        #expect(first.status == 200, "\(first.text)")
        #expect(first.json["is_new_user"] as? Bool == true && first.json["email"] as? String == "new@example.com")
        let again = try Self.signIn(client, provider.keys.token(Self.claims(provider, ["email": "new@example.com"]), algorithm: .es256))
        #expect(again.json["is_new_user"] as? Bool == false && again.json["user_id"] as? Int == first.json["user_id"] as? Int)
        let token = try #require(again.json["token"] as? String)
        let me = try client.get("/api/me", headers: ["Authorization": "Bearer \(token)"])
        #expect(me.status == 200)
        let listed = try client.get("/api/me/identities", headers: ["Authorization": "Bearer \(token)"])
        let identities = listed.json["identities"] as? [[String: Any]] ?? []
        #expect(identities.count == 1 && identities.first?["provider"] as? String == "local"
                && identities.first?["issuer"] as? String == provider.issuer)
        let instance = try client.get("/api/instance")
        #expect(instance.json["sign_in"] as? [String] == ["email", "local"])
        // The export has it; deleting the account takes it.
        let export = try client.get("/api/me/export", headers: ["Authorization": "Bearer \(token)"])
        #expect((export.json["identities"] as? [[String: Any]])?.first?["subject"] as? String == "sub-1")
        #expect(try client.send("DELETE", "/api/me", headers: ["Authorization": "Bearer \(token)"]).status == 200)
        let count = try app.pool.withConnection { try $0.query("SELECT count(*)::int8 AS n FROM identities").firstRow().decode("n", as: Int64.self) }
        #expect(count == 0)
    }

    @Test func aVerifiedEmailJoinsItsAccount_anUnverifiedOneDoesNot() throws {
        let provider = try TestOpenIDProvider()
        defer { provider.stop() }
        let app = try Self.start(provider, linksByEmail: true)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        _ = try AuthTests.signIn("ash@example.com", in: app, client: client)
        let joined = try Self.signIn(client, provider.keys.token(Self.claims(provider, ["sub": "verified"])))
        #expect(joined.json["is_new_user"] as? Bool == false && joined.json["email"] as? String == "ash@example.com")
        let apart = try Self.signIn(client, provider.keys.token(Self.claims(provider, ["sub": "unverified", "email_verified": false])))
        #expect(apart.json["is_new_user"] as? Bool == true && apart.json["email"] as? String != "ash@example.com")
        #expect(apart.json["user_id"] as? Int != joined.json["user_id"] as? Int)
        // That account's only way in is its identity: it cannot be unlinked.
        let token = try #require(apart.json["token"] as? String)
        let identities = try client.get("/api/me/identities", headers: ["Authorization": "Bearer \(token)"]).json["identities"] as? [[String: Any]]
        let id = try #require(identities?.first?["id"] as? Int)
        #expect(try client.send("DELETE", "/api/me/identities/\(id)", headers: ["Authorization": "Bearer \(token)"]).status == 409)
        // The joined account has email codes too: its identity may go; another's is not found.
        let joinedToken = try #require(joined.json["token"] as? String)
        #expect(try client.send("DELETE", "/api/me/identities/\(id)", headers: ["Authorization": "Bearer \(joinedToken)"]).status == 404)
        let own = try client.get("/api/me/identities", headers: ["Authorization": "Bearer \(joinedToken)"]).json["identities"] as? [[String: Any]]
        let ownID = try #require(own?.first?["id"] as? Int)
        #expect(try client.send("DELETE", "/api/me/identities/\(ownID)", headers: ["Authorization": "Bearer \(joinedToken)"]).status == 200)
    }

    /// A provider not trusted with emails (neither Apple's, Google's nor marked +email): its
    /// verified email does not take the account that has it (409: sign in as before, then
    /// link), nor does it become a new account's email (whose owner's email-code sign-in
    /// would land in the provider account's).
    @Test func anUntrustedProvidersVerifiedEmail_joinsNoAccount() throws {
        let provider = try TestOpenIDProvider()
        defer { provider.stop() }
        let app = try Self.start(provider)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        _ = try AuthTests.signIn("ash@example.com", in: app, client: client)
        let users = try Self.count("users", in: app)
        let refused = try Self.signIn(client, provider.keys.token(Self.claims(provider, ["email": "Ash@Example.com"])))
        #expect(refused.status == 409 && (refused.json["message"] as? String)?.contains("sign in to it as before") == true,
                "\(refused.text)")
        #expect(try Self.count("users", in: app) == users && Self.count("identities", in: app) == 0)

        let fresh = try Self.signIn(client, provider.keys.token(Self.claims(provider, ["sub": "fresh", "email": "new@example.com"])))
        #expect(fresh.status == 200 && fresh.json["is_new_user"] as? Bool == true, "\(fresh.text)")
        #expect((fresh.json["email"] as? String)?.hasSuffix("@identities.invalid") == true, "\(fresh.text)")
        _ = try AuthTests.signIn("new@example.com", in: app, client: client)
        #expect(try Self.userID("new@example.com", in: app) != fresh.json["user_id"] as? Int)
    }

    /// Signed in (a bearer token), a provider's sign-in links its identity to the caller's
    /// account whatever its email says; from then on it signs in to that account. Another
    /// user's identity is 409, a dead token 401.
    @Test func aSignedInCallersProviderSignIn_linksTheIdentityToTheirAccount() throws {
        let provider = try TestOpenIDProvider()
        defer { provider.stop() }
        let app = try Self.start(provider)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let ash = try AuthTests.signIn("ash@example.com", in: app, client: client)
        let ashID = try #require(try Self.userID("ash@example.com", in: app))
        let claims = Self.claims(provider, ["sub": "ash-at-corp", "email": "ash@corp.example"])
        let linked = try Self.signIn(client, provider.keys.token(claims), bearer: ash)
        #expect(linked.status == 200 && linked.json["user_id"] as? Int == ashID && linked.json["is_new_user"] as? Bool == false
                && linked.json["email"] as? String == "ash@example.com", "\(linked.text)")
        #expect(try Self.signIn(client, provider.keys.token(claims), bearer: ash).json["user_id"] as? Int == ashID)
        let identities = try client.get("/api/me/identities", headers: ["Authorization": "Bearer \(ash)"]).json["identities"]
        #expect((identities as? [[String: Any]])?.map { $0["email"] as? String } == ["ash@corp.example"])
        #expect(try Self.signIn(client, provider.keys.token(claims)).json["user_id"] as? Int == ashID)

        let other = try Self.signIn(client, provider.keys.token(Self.claims(provider, ["sub": "other", "email": "o@corp.example"])))
        #expect(other.status == 200 && other.json["user_id"] as? Int != ashID)
        let taken = try Self.signIn(client, provider.keys.token(Self.claims(provider, ["sub": "other"])), bearer: ash)
        #expect(taken.status == 409 && (taken.json["message"] as? String)?.contains("another user") == true, "\(taken.text)")
        #expect(try Self.signIn(client, provider.keys.token(Self.claims(provider, ["sub": "late"])), bearer: "dead").status == 401)
        #expect(try Self.count("identities", in: app) == 2)
    }

    /// Marked +email, the same provider's verified email joins the account that has it; a
    /// placeholder address in a token joins nothing (it is another identity's account).
    @Test func aProviderMarkedPlusEmail_joinsByVerifiedEmail_butNeverAPlaceholder() throws {
        let provider = try TestOpenIDProvider()
        defer { provider.stop() }
        let marked = try Configuration.fromEnvironment(["OIDC_PROVIDERS": "local+email=\(provider.issuer)|\(Self.clientID)"])
        let app = try TestApplication.start { configuration in
            configuration.authMode = .token
            configuration.oidcProviders = marked.oidcProviders
        }
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        _ = try AuthTests.signIn("ash@example.com", in: app, client: client)
        let joined = try Self.signIn(client, provider.keys.token(Self.claims(provider, ["sub": "joiner"])))
        #expect(joined.status == 200 && joined.json["is_new_user"] as? Bool == false
                && joined.json["email"] as? String == "ash@example.com", "\(joined.text)")

        let apart = try Self.signIn(client, provider.keys.token(Self.claims(provider, ["sub": "apart", "email_verified": false])))
        let placeholder = try #require(apart.json["email"] as? String)
        #expect(placeholder.hasSuffix("@identities.invalid"))
        let squatter = try Self.signIn(client, provider.keys.token(Self.claims(provider, ["sub": "squatter", "email": placeholder])))
        #expect(squatter.status == 200 && squatter.json["is_new_user"] as? Bool == true, "\(squatter.text)")
        #expect(squatter.json["user_id"] as? Int != apart.json["user_id"] as? Int)
    }

    /// The name an app sends with a first sign-in is a full name like any other: the word
    /// filter applies to it (and no account is made); a returning user's is not used.
    @Test func aFullNameWithABlockedWord_isRefused_aCleanOneNamesTheNewUser() throws {
        let provider = try TestOpenIDProvider()
        defer { provider.stop() }
        let list = try BlockedWordsFileTests.write("badword\n")
        defer { try? FileManager.default.removeItem(atPath: list) }
        let app = try Self.start(provider, blockedWordsFile: list)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let token = try provider.keys.token(Self.claims(provider))
        let refused = try client.send("POST", "/api/auth/oidc", json: ["provider": "local", "id_token": token, "full_name": "Ash BadWord"])
        #expect(refused.status == 422 && refused.json["message"] as? String == "contains a blocked word", "\(refused.text)")
        let named = try client.send("POST", "/api/auth/oidc", json: ["provider": "local", "id_token": token, "full_name": " Ash Ketchum "])
        #expect(named.status == 200, "\(named.text)")
        let userID = try #require(named.json["user_id"] as? Int)
        let profile = try client.get("/api/profiles/\(userID)").json["profile"] as? [String: Any]
        #expect(profile?["full_name"] as? String == "Ash Ketchum")
        // A returning user's name is not used, so not checked: sent again, it does not lock them out.
        let again = try client.send("POST", "/api/auth/oidc", json: ["provider": "local", "id_token": token, "full_name": "Ash BadWord"])
        #expect(again.status == 200 && again.json["user_id"] as? Int == userID, "\(again.text)")
    }

    /// A double tap: first sign-ins of one identity at once all succeed, as one user, made once.
    @Test func firstSignInsAtOnce_ofOneIdentity_allSucceed_asOneUser() throws {
        let provider = try TestOpenIDProvider()
        defer { provider.stop() }
        let app = try Self.start(provider)
        defer { app.stop() }
        let clients = try (0..<4).map { _ in try APIClient(port: app.server.port) }
        for round in 0..<4 {
            for verified in [true, false] {
                let claims = Self.claims(provider, ["sub": "tap-\(round)-\(verified)", "email": "tap\(round)@example.com",
                                                    "email_verified": verified])
                let token = try provider.keys.token(claims)
                let answers = Mutex<[(Int, Int?, Bool?)]>([])
                DispatchQueue.concurrentPerform(iterations: clients.count) { index in
                    let answer = try? Self.signIn(clients[index], token)
                    answers.withLock {
                        $0.append((answer?.status ?? 0, answer?.json["user_id"] as? Int, answer?.json["is_new_user"] as? Bool))
                    }
                }
                let all = answers.withLock { $0 }
                #expect(all.allSatisfy { $0.0 == 200 }, "\(all)")
                #expect(Set(all.compactMap(\.1)).count == 1 && all.filter { $0.2 == true }.count == 1, "\(all)")
            }
        }
        // A name is counted after trimming, as a profile's is.
        let padded = "  " + String(repeating: "a", count: 100) + "  "
        let named = try clients[0].send("POST", "/api/auth/oidc", json: ["provider": "local", "id_token": try provider.keys.token(
            Self.claims(provider, ["sub": "padded"])), "full_name": padded])
        #expect(named.status == 200, "\(named.text)")
    }

    /// An account whose only ways in are two identities: unlinking both at once leaves one.
    /// Each unlink counts the other identity as remaining; only serializable isolation sees
    /// that both counts cannot hold (write skew), so one of the two is run again and refused.
    @Test func twoUnlinksAtOnce_ofTheLastTwoIdentities_leaveOne() throws {
        let provider = try TestOpenIDProvider()
        defer { provider.stop() }
        let app = try Self.start(provider)
        defer { app.stop() }
        let clients = [try APIClient(port: app.server.port), try APIClient(port: app.server.port)]
        for round in 0..<8 {
            let signedIn = try Self.signIn(clients[0], provider.keys.token(Self.claims(provider, ["sub": "race-\(round)", "email_verified": false])))
            let token = try #require(signedIn.json["token"] as? String)
            let userID = try #require(signedIn.json["user_id"] as? Int)
            // A second identity, as a future link would add it.
            try app.pool.withConnection { connection in
                _ = try connection.query("""
                    INSERT INTO identities (user_id, issuer, subject) VALUES (\(Int64(userID)), 'https://other.example', \("race-\(round)"))
                    """)
            }
            let listed = try clients[0].get("/api/me/identities", headers: ["Authorization": "Bearer \(token)"])
            let ids = (listed.json["identities"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
            try #require(ids.count == 2)
            let statuses = Mutex<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                let status = (try? clients[index].send("DELETE", "/api/me/identities/\(ids[index])",
                                                      headers: ["Authorization": "Bearer \(token)"]).status) ?? 0
                statuses.withLock { $0.append(status) }
            }
            #expect(statuses.withLock { $0.sorted() } == [200, 409], "round \(round)")
            let left = try app.pool.withConnection {
                try $0.query("SELECT count(*)::int8 AS n FROM identities WHERE user_id = \(Int64(userID))").firstRow().decode("n", as: Int64.self)
            }
            #expect(left == 1, "round \(round)")
        }
    }

    @Test func eachBadToken_isRefused_sayingWhy() throws {
        let provider = try TestOpenIDProvider()
        defer { provider.stop() }
        let app = try Self.start(provider)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let keys = provider.keys
        let now = Int64(Date().timeIntervalSince1970)
        let cases: [(String, String?, String)] = [
            (try keys.token(Self.claims(provider, ["aud": "com.other"])), nil, "not for this app"),
            (try keys.token(Self.claims(provider, ["iss": "https://evil.example"])), nil, "issued by https://evil.example"),
            (try keys.token(Self.claims(provider, ["exp": now - 120])), nil, "expired"),
            (try keys.token(Self.claims(provider, ["iat": now + 600])), nil, "in the future"),
            (try keys.token(Self.claims(provider), algorithm: .none), nil, "alg none"),
            (try keys.token(Self.claims(provider), algorithm: .hs256), nil, "alg HS256"),
            (try TestSigningKeys(rsaKeyID: keys.rsaKeyID).token(Self.claims(provider)), nil, "signature does not verify"),
            (try keys.token(Self.claims(provider, ["nonce": "abc"])), "xyz", "nonce"),
            ("not a token", nil, "three base64url parts"),
        ]
        for (token, nonce, reason) in cases {
            let refused = try Self.signIn(client, token, nonce: nonce)
            #expect(refused.status == 401 && (refused.json["message"] as? String)?.contains(reason) == true, "\(reason): \(refused.text)")
        }
        #expect(try client.send("POST", "/api/auth/oidc", json: ["provider": "nope", "id_token": "x"]).status == 422)
    }

    @Test func aRotatedKey_isFetched_andAProviderDownIs503UntilItIsBack() throws {
        let provider = try TestOpenIDProvider()
        defer { provider.stop() }
        provider.stop()
        let app = try Self.start(provider)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let down = try Self.signIn(client, provider.keys.token(Self.claims(provider)))
        #expect(down.status == 503 && down.header("Retry-After") != nil)
        try provider.start()
        #expect(eventually(timeout: .seconds(20)) { (try? Self.signIn(client, provider.keys.token(Self.claims(provider))).status) == 200 })
        try provider.rotateKeys()
        let rotated = try Self.signIn(client, provider.keys.token(Self.claims(provider)))
        #expect(rotated.status == 200, "\(rotated.text)")
    }
}
