import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// Direct push end to end (API.md "Push to every device"): the server sends to APNs, FCM
/// and a browser's Web Push service (`TestPushServices`: stand-ins that verify every token
/// and signature with their own code, and decrypt Web Push with an independent library),
/// and does what each documented answer asks. Every wait is on something observable, each
/// bounded; backoffs are skipped with the test's clock.
@Suite(.serialized) struct DirectPushTests {
    static let iPhone = String(repeating: "ab", count: 32)
    static let otherPhone = String(repeating: "cd", count: 32)

    static func start(_ services: TestPushServices, only: Set<String>? = nil, webhook: PushReceiver? = nil,
                      clock: ServerClock = ServerClock()) throws -> Application {
        var environment = services.environment
        if let only {
            let prefixes = only.map { $0 == "webpush" ? "WEBPUSH_" : "\($0.uppercased())_" } + ["PUSH_CA_FILE"]
            environment = environment.filter { key, _ in prefixes.contains { key.hasPrefix($0) } }
        }
        let providers = try PushProviderSettings.parse { environment[$0] }
        let push = try webhook.flatMap { try PushSettings.parse(url: $0.url, secret: PushTestSupport.secret) }
        return try TestApplication.start(clock: clock) {
            $0.pushProviders = providers
            $0.push = push
        }
    }

    @Test func aLike_reachesAnIPhoneAnAndroidPhoneAndABrowser_asEachServiceDocuments() throws {
        let services = try TestPushServices()
        let app = try Self.start(services)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let subscription = try #require(services.subscriptions.first)
        #expect(try ash.pushToken("apns", Self.iPhone).status == 200)
        #expect(try ash.pushToken("fcm", "fcm-token-1").status == 200)
        #expect(try ash.pushToken("webpush", subscription).status == 200)
        let post = try ash.createPost("Hello")
        #expect(try blair.send("PUT", "/api/posts/\(post.id)/like").status == 200)

        let requests = try #require(services.waitFor { requests in
            ["apns", "fcm", "webpush"].allSatisfy { service in requests.contains { $0.service == service && $0.status < 300 } }
        })
        let blairName = "@\(try blair.username())"
        let apns = try #require(requests.first { $0.service == "apns" && $0.status == 200 })
        #expect(apns.token == Self.iPhone)
        #expect(apns.headers["apns-topic"] == TestPushServices.apnsTopic && apns.headers["apns-push-type"] == "alert")
        #expect(apns.headers["apns-priority"] == "10" && apns.headers["apns-collapse-id"] == "post-\(post.id)")
        #expect(Int(apns.headers["apns-expiration"] ?? "").map { $0 > Int(Date().timeIntervalSince1970) } == true)
        let aps = try #require(apns.payload?["aps"] as? [String: any Sendable])
        let alert = try #require(aps["alert"] as? [String: any Sendable])
        #expect(alert["title"] as? String == blairName && alert["body"] as? String == "\(blairName) liked your post")
        #expect(aps["badge"] as? Int == 1 && aps["sound"] as? String == "default" && aps["mutable-content"] as? Int == 1)
        #expect(aps["thread-id"] as? String == "post-\(post.id)")
        let notification = try #require(apns.payload?["notification"] as? [String: any Sendable])
        #expect(notification["type"] as? String == "post.liked" && notification["post_id"] as? Int == post.id)

        let fcm = try #require(requests.first { $0.service == "fcm" && $0.status == 200 })
        #expect(fcm.payload?["token"] as? String == "fcm-token-1")
        let fcmNotification = try #require(fcm.payload?["notification"] as? [String: any Sendable])
        #expect(fcmNotification["title"] as? String == blairName)
        let data = try #require(fcm.payload?["data"] as? [String: any Sendable])
        #expect(data["type"] as? String == "post.liked" && data["post_id"] as? String == String(post.id))
        let android = try #require(fcm.payload?["android"] as? [String: any Sendable])
        #expect(android["collapse_key"] as? String == "post-\(post.id)")
        #expect(requests.filter { $0.service == "token" }.count == 1)

        // Decrypted by the stand-in's own library, with a key the server never saw.
        let web = try #require(requests.first { $0.service == "webpush" && $0.status == 201 })
        #expect(web.payload?["title"] as? String == blairName && web.payload?["body"] as? String == "\(blairName) liked your post")
        #expect(web.payload?["badge"] as? Int == 1 && web.payload?["tag"] as? String == "post-\(post.id)")
        #expect(web.headers["ttl"] == String(WebPushSender.timeToLiveSeconds) && web.headers["urgency"] == "normal")
        let instance = try APIClient(port: app.server.port).get("/api/instance").json
        #expect(instance["webpush_public_key"] as? String == web.headers["vapid_k"])
        #expect((instance["features"] as? [String])?.contains("push") == true)

        let health = try MailTestSupport.health(of: app)["push"] as? [String: Any]
        #expect(health?["webhook"] as? String == "not_configured")
        #expect(health?["apns"] as? String == "ok" && health?["fcm"] as? String == "ok" && health?["webpush"] as? String == "ok")
        for provider in ["apns", "fcm", "webpush"] {
            #expect(try eventually { try MailTestSupport.metric(#"push_sent_total{provider="\#(provider)"}"#, of: app) == 1 })
        }

        // The badge is the recipient's unread count: a second like makes it 2.
        let casey = try APIClient.user("casey@example.com", on: app)
        #expect(try casey.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        let second = try #require(services.waitFor { $0.filter { $0.service == "apns" && $0.status == 200 }.count == 2 })
        let lastAPS = second.last { $0.service == "apns" && $0.status == 200 }?.payload?["aps"] as? [String: any Sendable]
        #expect(lastAPS?["badge"] as? Int == 2)
    }

    @Test func deadTokens_areRemoved_andGetNothingMore() throws {
        let services = try TestPushServices()
        let app = try Self.start(services)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let subscriptions = services.subscriptions
        let tokens = [("apns", Self.iPhone), ("apns", Self.otherPhone), ("fcm", "gone-1"), ("fcm", "gone-2"),
                      ("webpush", subscriptions[1]), ("fcm", "alive")]
        for (platform, token) in tokens { #expect(try ash.pushToken(platform, token).status == 200) }
        try services.answer([
            .init(service: "apns", token: Self.iPhone, status: 410, reason: "Unregistered"),
            .init(service: "apns", token: Self.otherPhone, status: 400, reason: "BadDeviceToken"),
            .init(service: "fcm", token: "gone-1", status: 404, reason: "UNREGISTERED"),
            .init(service: "fcm", token: "gone-2", status: 400, reason: "INVALID_ARGUMENT"),
            .init(service: "webpush", token: "1", status: 410),
        ])
        let post = try ash.createPost("Hello")
        #expect(try blair.send("PUT", "/api/posts/\(post.id)/like").status == 200)

        let left = try #require(try eventuallyValue(timeout: .seconds(20)) { () throws -> [String]? in
            let rows = try app.pool.withConnection { try $0.query("SELECT token FROM push_tokens ORDER BY token").rows }
            let left = try rows.map { try $0.decode("token", as: String.self) }
            return left == ["alive"] ? left : nil
        })
        #expect(left == ["alive"])
        #expect(try eventually { try MailTestSupport.metric(#"push_tokens_removed_total{provider="apns"}"#, of: app) == 2 })
        #expect(try MailTestSupport.metric(#"push_tokens_removed_total{provider="fcm"}"#, of: app) == 2)
        #expect(try MailTestSupport.metric(#"push_tokens_removed_total{provider="webpush"}"#, of: app) == 1)
        #expect(try MailTestSupport.metric(#"push_failed_total{provider="apns",reason="token_removed"}"#, of: app) == 2)

        // The next notification reaches only the token left.
        let before = services.requests.count
        #expect(try blair.send("POST", "/api/posts/\(post.id)/comments", json: ["body": "Nice"]).status == 201)
        let after = try #require(services.waitFor { $0.filter { $0.service == "fcm" && $0.status == 200 }.count == 2 })
        #expect(after.dropFirst(before).allSatisfy { $0.service == "fcm" && $0.token == "alive" || $0.service == "token" })
    }

    @Test func expiredCredentials_areRenewed_andThePushIsSentAgain() throws {
        let services = try TestPushServices()
        let app = try Self.start(services)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try ash.pushToken("apns", Self.iPhone).status == 200)
        #expect(try ash.pushToken("fcm", "fcm-token-1").status == 200)
        try services.answer([.init(service: "apns", status: 403, reason: "ExpiredProviderToken"),
                             .init(service: "fcm", status: 401, reason: "UNAUTHENTICATED")])
        #expect(try blair.follow(try ash.userID()).status == 200)

        let requests = try #require(services.waitFor { requests in
            requests.contains { $0.service == "apns" && $0.status == 200 } && requests.contains { $0.service == "fcm" && $0.status == 200 }
        })
        let apns = requests.filter { $0.service == "apns" }
        #expect(apns.map(\.status) == [403, 200])
        #expect(apns[0].credential != apns[1].credential)
        let fcm = requests.filter { $0.service == "fcm" }
        #expect(fcm.map(\.status) == [401, 200])
        #expect(fcm[0].credential != fcm[1].credential)
        #expect(requests.filter { $0.service == "token" }.map(\.status) == [200, 200])
    }

    /// An access token is kept while it is valid: one exchange at the token endpoint for
    /// many pushes.
    @Test func anAccessToken_isKeptWhileValid() throws {
        let services = try TestPushServices(accessTokenLifetime: 3600)
        let app = try Self.start(services)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        #expect(try ash.pushToken("fcm", "fcm-token-1").status == 200)
        for (index, email) in ["blair@example.com", "casey@example.com", "dana@example.com"].enumerated() {
            let fan = try APIClient.user(email, on: app)
            #expect(try fan.follow(try ash.userID()).status == 200)
            _ = try #require(services.waitFor { $0.filter { $0.service == "fcm" && $0.status == 200 }.count == index + 1 })
        }
        let requests = services.requests
        #expect(requests.filter { $0.service == "token" }.count == 1)
        #expect(Set(requests.filter { $0.service == "fcm" }.map(\.credential)).count == 1)
    }

    @Test func aBusyService_isTriedAgain_afterItsRetryAfter() throws {
        let services = try TestPushServices()
        let clock = ServerClock()
        let app = try Self.start(services, only: ["apns"], clock: clock)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try ash.pushToken("apns", Self.iPhone).status == 200)
        try services.answer([.init(service: "apns", status: 429, reason: "TooManyRequests", retryAfter: 120)])
        #expect(try blair.follow(try ash.userID()).status == 200)

        // Waiting the two minutes the service asked for, not the first backoff's second.
        let wait = try #require(try eventuallyValue(timeout: .seconds(20)) { () throws -> Double? in
            let rows = try app.pool.withConnection { connection in
                try connection.query("""
                    SELECT extract(epoch FROM run_at - \(clock.now))::float8 AS wait FROM jobs
                    WHERE kind = 'push.send' AND attempts = 1 AND state = 'queued' AND last_error IS NOT NULL
                    """).rows
            }
            return try rows.first?.decode("wait", as: Double.self)
        })
        #expect(wait > 100)
        #expect(try MailTestSupport.health(of: app)["push"].flatMap { ($0 as? [String: Any])?["apns"] as? String } == "failing")
        #expect(try MailTestSupport.metric(#"push_failed_total{provider="apns",reason="unavailable"}"#, of: app) == 1)
        clock.advance(by: .seconds(121))
        _ = try #require(services.waitFor { $0.contains { $0.service == "apns" && $0.status == 200 } })
        #expect(try eventually {
            try MailTestSupport.health(of: app)["push"].flatMap { ($0 as? [String: Any])?["apns"] as? String } == "ok"
        })
    }

    @Test func manyPushes_shareOneConnection() throws {
        let services = try TestPushServices()
        let app = try Self.start(services, only: ["apns"])
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        #expect(try ash.pushToken("apns", Self.iPhone).status == 200)
        let post = try ash.createPost("Hello")
        let fans = 24
        for index in 0..<fans {
            let fan = try APIClient.user("fan\(index)@example.com", on: app)
            #expect(try fan.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        }
        let requests = try #require(services.waitFor { $0.filter { $0.service == "apns" && $0.status == 200 }.count == fans })
        #expect(Set(requests.filter { $0.service == "apns" }.map(\.connection)).count == 1)
        #expect(services.connections == 1)
    }

    /// The policy is checked again at send: a push whose actor was muted (or blocked, or
    /// suspended) after the act, before the push went out, is not sent.
    @Test func aPushWhoseActorWasMutedMeanwhile_isNotSent() throws {
        let services = try TestPushServices()
        let app = try Self.start(services, only: ["apns"])
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let casey = try APIClient.user("casey@example.com", on: app)
        #expect(try ash.pushToken("apns", Self.iPhone).status == 200)
        let post = try ash.createPost("Hello")
        app.jobs.pause()
        #expect(try blair.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        #expect(try ash.send("PUT", "/api/users/\(try blair.userID())/mute").status == 200)
        app.jobs.resume()
        #expect(try casey.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        _ = try #require(services.waitFor { $0.contains { $0.service == "apns" && $0.status == 200 } })
        #expect(try app.jobs.drain())
        let delivered = services.delivered("apns")
        #expect(delivered.count == 1)
        let alert = (delivered.first?.payload?["aps"] as? [String: any Sendable])?["alert"] as? [String: any Sendable]
        #expect(alert?["title"] as? String == "@\(try casey.username())")
    }

    @Test func webPushSubscriptions_areCheckedWhenRegistered() throws {
        let services = try TestPushServices()
        let app = try Self.start(services, only: ["webpush"])
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        #expect(try ash.pushToken("webpush", "not json").status == 422)
        #expect(try ash.pushToken("webpush", #"{"endpoint":"http://push.example/x","keys":{"p256dh":"AA","auth":"AA"}}"#).status == 422)
        let subscription = try #require(services.subscriptions.first)
        #expect(try ash.pushToken("webpush", subscription.replacingOccurrences(of: "\"auth\":\"", with: "\"auth\":\"x")).status == 422)
        #expect(try ash.pushToken("webpush", subscription).status == 200)
        // Without WEBPUSH_ALLOW_PRIVATE a loopback endpoint can never be pushed to.
        var strict = try PushProviderSettings.parse { services.environment[$0] }
        strict.webPush?.allowsPrivatePeers = false
        let strictPush = try #require(try DirectPush(settings: strict))
        #expect(!strictPush.allowsEndpoint(URL(string: "https://127.0.0.1:9/wp/0")!))
        #expect(!strictPush.allowsEndpoint(URL(string: "https://[::1]/wp/0")!))
        #expect(!strictPush.allowsEndpoint(URL(string: "https://10.1.2.3/wp/0")!))
        #expect(strictPush.allowsEndpoint(URL(string: "https://fcm.googleapis.com/fcm/send/abc")!))
    }

    /// A service away when the server starts costs retries, not the start; its pushes go
    /// once it answers.
    @Test func aServiceDownAtStart_isNotFatal_andItsPushesGoOnceItAnswers() throws {
        let services = try TestPushServices()
        services.stop()
        let clock = ServerClock()
        let app = try Self.start(services, only: ["fcm"], clock: clock)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try ash.pushToken("fcm", "fcm-token-1").status == 200)
        #expect(try blair.follow(try ash.userID()).status == 200)
        #expect(try eventually {
            try MailTestSupport.health(of: app)["push"].flatMap { ($0 as? [String: Any])?["fcm"] as? String } == "failing"
        })
        try services.start()
        clock.advance(by: .seconds(600))
        _ = try #require(services.waitFor { $0.contains { $0.service == "fcm" && $0.status == 200 } })
    }

    /// The webhook keeps the platforms no service is configured for.
    @Test func theWebhook_keepsThePlatformsWithoutAService() throws {
        let services = try TestPushServices()
        let receiver = try PushReceiver()
        let app = try Self.start(services, only: ["apns"], webhook: receiver)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try ash.pushToken("apns", Self.iPhone).status == 200)
        #expect(try ash.pushToken("fcm", "fcm-token-1").status == 200)
        #expect(try blair.follow(try ash.userID()).status == 200)
        let push = try #require(receiver.waitFor(1)?.first)
        let tokens = push.json["push_tokens"] as? [[String: Any]]
        #expect(tokens?.map { $0["platform"] as? String } == ["fcm"])
        _ = try #require(services.waitFor { $0.contains { $0.service == "apns" && $0.status == 200 } })
        let health = try MailTestSupport.health(of: app)["push"] as? [String: Any]
        #expect(health?["webhook"] as? String == "ok" && health?["fcm"] as? String == "not_configured")
    }

    /// Credentials are renewed on time, judged by real time (the senders are given it): an
    /// APNs provider token after 40 minutes, an FCM access token 5 minutes before Google
    /// says it expires; until then the same one is sent.
    @Test func providerAndAccessTokens_areRenewedOnTime() throws {
        let services = try TestPushServices(accessTokenLifetime: 330)
        let settings = try PushProviderSettings.parse { services.environment[$0] }
        let connections = try CurlMultiplexer(trustedCertificates: CurlMultiplexer.bundle(adding: Array(try String(
            contentsOfFile: services.caFile, encoding: .utf8).utf8)), cancellation: CurlTransfer.Cancellation())
        let payload = PushPayload(notificationID: 1, type: "followed", recipientID: 2, actorID: 3, actorUsername: "blair",
                                  actorFullName: "", postID: nil, commentID: nil, tokens: [])
        let start = Date()

        let apns = try APNsSender(settings: try #require(settings.apns), keyPEM: try String(contentsOfFile: services.apnsKeyFile, encoding: .utf8))
        let iPhone = [DevicePush(payload: payload, token: Self.iPhone, badge: 1)]
        for offset in [0.0, 60, 2399, 2401] {
            #expect(apns.send(iPhone, over: connections, now: start.addingTimeInterval(offset)) == [.delivered])
        }
        let providerTokens = services.requests.filter { $0.service == "apns" }.compactMap(\.credential)
        try #require(providerTokens.count == 4)
        #expect(Set(providerTokens.prefix(3)).count == 1 && providerTokens[3] != providerTokens[0])

        let account = try FCMServiceAccount(json: Array(try String(contentsOfFile: services.fcmServiceAccountFile, encoding: .utf8).utf8))
        let fcm = FCMSender(settings: try #require(settings.fcm), account: account)
        let phone = [DevicePush(payload: payload, token: "fcm-token-1", badge: 1)]
        for offset in [0.0, 29, 31] {
            #expect(fcm.send(phone, over: connections, now: start.addingTimeInterval(offset)) == [.delivered])
        }
        let requests = services.requests
        #expect(requests.filter { $0.service == "token" }.count == 2)
        let accessTokens = requests.filter { $0.service == "fcm" }.compactMap(\.credential)
        try #require(accessTokens.count == 3)
        #expect(accessTokens[0] == accessTokens[1] && accessTokens[2] != accessTokens[0])
        #expect(services.connections == 1)
    }
}
