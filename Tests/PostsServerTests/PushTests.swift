import Crypto
import Dispatch
import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// Push end to end (API.md "Push"): a new notification is POSTed to a receiver the test
/// runs, signed, with the recipient's tokens as they are when it is sent; a receiver that
/// fails or is away gets the same delivery again until it takes it. Every wait is on
/// something observable (a request arrived, a row changed), each bounded.
@Suite(.serialized) struct PushTests {
    /// What a receiver must do to trust a push: the HMAC of the exact bytes, with the secret.
    private static func expectedSignature(of body: [UInt8]) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(PushTestSupport.secret.utf8)))
        return "sha256=" + code.map { String(format: "%02x", $0) }.joined()
    }

    @Test func like_isPostedOnce_signed_withTheRecipientsTokens_andOwnActsAreNot() throws {
        let receiver = try PushReceiver()
        let app = try PushTestSupport.start(pushingTo: receiver)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let (ashID, blairID) = (try ash.userID(), try blair.userID())
        #expect(try blair.send("PATCH", "/api/profiles/me", json: ["full_name": "Blair \"B\" Doe"]).status == 200)
        #expect(try ash.pushToken("apns", "a1b2c3", device: "ash-iphone").status == 200)
        #expect(try ash.pushToken("fcm", "fcm:token/with+chars").status == 200)
        let post = try ash.createPost("Hello")
        // One's own like notifies nobody; the like by Blair does.
        #expect(try ash.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        #expect(try blair.send("PUT", "/api/posts/\(post.id)/like").status == 200)

        let push = try #require(receiver.waitFor(1)?.first)
        #expect(push.contentType == "application/json")
        #expect(push.userAgent == "posts-server")
        #expect(push.signature == Self.expectedSignature(of: push.body))
        #expect(push.delivery?.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/) != nil)
        let notificationID: Int = try app.pool.withConnection {
            try $0.query("SELECT id FROM notifications WHERE type = 'post.liked'").firstRow().decode("id")
        }
        let body = push.json
        #expect(Set(body.keys) == ["id", "type", "recipient_id", "push_tokens", "title", "body", "data"])
        #expect(body["id"] as? Int == notificationID)
        #expect(body["type"] as? String == "post.liked")
        #expect(body["recipient_id"] as? Int == ashID)
        let tokens = try #require(body["push_tokens"] as? [[String: Any]])
        #expect(tokens.count == 2)
        #expect(tokens.first?["platform"] as? String == "apns" && tokens.first?["token"] as? String == "a1b2c3")
        #expect(tokens.first?["device_id"] as? String == "ash-iphone")
        #expect(tokens.last?["platform"] as? String == "fcm" && tokens.last?["token"] as? String == "fcm:token/with+chars")
        #expect(tokens.last?["device_id"] is NSNull)
        #expect(body["title"] as? String == "Blair \"B\" Doe")
        #expect(body["body"] as? String == "@\(try blair.username()) liked your post")
        let data = try #require(body["data"] as? [String: Any])
        #expect(Set(data.keys) == ["notification_id", "type", "actor_id", "post_id"])
        #expect(data["notification_id"] as? Int == notificationID && data["type"] as? String == "post.liked")
        #expect(data["actor_id"] as? Int == blairID && data["post_id"] as? Int == post.id)

        // The next push is Blair's follow: had Ash's own like been posted, it would be here first.
        #expect(try blair.follow(ashID).status == 200)
        let both = try #require(receiver.waitFor(2))
        #expect(both.count == 2)
        #expect(both[1].json["type"] as? String == "followed")
        #expect(both[1].json["body"] as? String == "@\(try blair.username()) started following you")
        #expect(both[1].delivery != push.delivery)
        #expect(try PushTestSupport.waitForOutbox(in: app) { $0.isEmpty } != nil)
        #expect(try eventually { try MailTestSupport.metric(#"push_sent_total{provider="webhook"}"#, of: app) == 2 })
        #expect(try MailTestSupport.metric(#"push_failed_total{provider="webhook",reason="expired"}"#, of: app) == 0)
        #expect(try MailTestSupport.metric("push_queue_depth", of: app) == 0)
    }

    /// The retries come after their backoff (1 s, then 2 s), which the test's clock skips.
    @Test func failingReceiver_getsTheSameDeliveryAgain_untilItAnswers2xx() throws {
        let receiver = try PushReceiver(failing: 2)
        let clock = ServerClock()
        let app = try PushTestSupport.start(pushingTo: receiver, clock: clock)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let post = try ash.createPost("Hello")
        #expect(try blair.send("POST", "/api/posts/\(post.id)/comments", json: ["body": "Nice"]).status == 201)

        // (On a slow machine the real backoff may pass first: the retry is then under way, or done.)
        for (failures, backoff) in [(1, 1), (2, 2)] {
            _ = try #require(try PushTestSupport.waitForOutbox(in: app) { rows in
                rows.first.map { $0.attempts >= failures && $0.lastError != nil } ?? true
            })
            clock.advance(by: .seconds(backoff))
        }
        let tries = try #require(receiver.waitFor(3))
        #expect(tries.count == 3)
        #expect(Set(tries.map(\.delivery)).count == 1)
        #expect(Set(tries.map(\.body)).count == 1)
        #expect(tries.allSatisfy { $0.signature == Self.expectedSignature(of: $0.body) })
        let body = tries[0].json
        #expect(body["type"] as? String == "post.commented")
        #expect(body["title"] as? String == "@\(try blair.username())")
        #expect(body["body"] as? String == "@\(try blair.username()) commented on your post")
        #expect((body["push_tokens"] as? [Any])?.isEmpty == true)
        let data = try #require(body["data"] as? [String: Any])
        #expect(data["post_id"] as? Int == post.id && (data["comment_id"] as? String)?.count == 36)
        #expect(try PushTestSupport.waitForOutbox(in: app) { $0.isEmpty } != nil)
        #expect(try eventually { try MailTestSupport.metric(#"push_sent_total{provider="webhook"}"#, of: app) == 1 })
        #expect(try MailTestSupport.metric(#"push_failed_total{provider="webhook",reason="expired"}"#, of: app) == 0)
    }

    @Test func receiverAway_isRetried_andGetsTheSameDeliveryWhenBack() throws {
        let receiver = try PushReceiver()
        receiver.stop()
        let app = try PushTestSupport.start(pushingTo: receiver)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try blair.follow(try ash.userID()).status == 200)

        // Refused twice (each time a try counted and the error kept), and still waiting.
        let waiting = try #require(try PushTestSupport.waitForOutbox(in: app) { $0.first.map { $0.attempts >= 2 } ?? false })
        let row = try #require(waiting.first)
        #expect(!row.failed && row.lastError?.isEmpty == false)
        #expect(try MailTestSupport.metric("push_queue_depth", of: app) == 1)
        #expect(receiver.received.isEmpty)

        try receiver.start()
        let push = try #require(receiver.waitFor(1)?.first)
        #expect(push.delivery == row.deliveryID)
        #expect(push.json["id"] as? Int == Int(row.notificationID))
        #expect(push.json["type"] as? String == "followed")
        #expect(try PushTestSupport.waitForOutbox(in: app) { $0.isEmpty } != nil)
        #expect(try eventually { try MailTestSupport.metric(#"push_sent_total{provider="webhook"}"#, of: app) == 1 })
        #expect(try MailTestSupport.metric("push_queue_depth", of: app) == 0)
    }

    /// An act undone before its push went out takes the push with it (its job finds the
    /// notification gone, and is done without posting): the receiver, back later, gets only
    /// what still stands.
    @Test func anUndoneAct_isNeverPushed() throws {
        let receiver = try PushReceiver()
        receiver.stop()
        let app = try PushTestSupport.start(pushingTo: receiver)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let ashID = try ash.userID()
        #expect(try blair.follow(ashID).status == 200)
        #expect(try PushTestSupport.waitForOutbox(in: app) { $0.count == 1 } != nil)
        // No try runs while the act is undone: the next one comes after it.
        app.jobs.pause()
        #expect(try blair.follow(ashID, false).status == 200)

        let post = try ash.createPost("Hello")
        #expect(try blair.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        try receiver.start()
        app.jobs.resume()
        let push = try #require(receiver.waitFor(1)?.first)
        #expect(push.json["type"] as? String == "post.liked")
        #expect(try PushTestSupport.waitForOutbox(in: app) { $0.isEmpty } != nil)
        #expect(receiver.received.count == 1, "the undone follow was never posted")
        #expect(try MailTestSupport.metric(#"jobs_skipped_total{kind="push.deliver"}"#, of: app) == 1)
    }

    /// API.md: a mute hides notifications from the muted user, so nothing of theirs is
    /// pushed: not a like, not a follow. The next push is someone else's.
    @Test func aMutedUsersActs_areNeverPushed() throws {
        let receiver = try PushReceiver()
        let app = try PushTestSupport.start(pushingTo: receiver)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let muted = try APIClient.user("muted@example.com", on: app)
        let cleo = try APIClient.user("cleo@example.com", on: app)
        let ashID = try ash.userID()
        #expect(try ash.send("PUT", "/api/users/\(try muted.userID())/mute").status == 200)
        let post = try ash.createPost("Hello")
        #expect(try muted.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        #expect(try muted.follow(ashID).status == 200)
        #expect(try cleo.follow(ashID).status == 200)
        let push = try #require(receiver.waitFor(1)?.first)
        #expect(push.json["body"] as? String == "@\(try cleo.username()) started following you")
        #expect(try PushTestSupport.waitForOutbox(in: app) { $0.isEmpty } != nil)
        #expect(receiver.received.count == 1)
    }

    /// A push queued before its actor was muted, blocked or suspended, and not yet delivered,
    /// is dropped when its turn comes (API.md "Safety").
    @Test func aPushQueuedBeforeAMuteABlockOrASuspension_isDropped() throws {
        let receiver = try PushReceiver()
        receiver.stop()
        let app = try PushTestSupport.start(pushingTo: receiver)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let (muted, blocked, suspended) = (try APIClient.user("m@example.com", on: app), try APIClient.user("b@example.com", on: app),
                                           try APIClient.user("s@example.com", on: app))
        let cleo = try APIClient.user("cleo@example.com", on: app)
        let post = try ash.createPost("Hello")
        for actor in [muted, blocked, suspended] {
            #expect(try actor.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        }
        #expect(try PushTestSupport.waitForOutbox(in: app) { $0.count == 3 } != nil)
        // No try runs while the relations change: the next one comes after them.
        app.jobs.pause()
        defer { app.jobs.resume() }
        #expect(try ash.send("PUT", "/api/users/\(try muted.userID())/mute").status == 200)
        #expect(try ash.send("PUT", "/api/users/\(try blocked.userID())/block").status == 200)
        let mod = try APIClient.moderator("mod@example.com", on: app)
        #expect(try mod.send("POST", "/api/moderation/users/\(try suspended.userID())/suspend", json: [:]).status == 200)
        #expect(try cleo.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        try receiver.start()
        app.jobs.resume()
        let push = try #require(receiver.waitFor(1)?.first)
        #expect(push.json["body"] as? String == "@\(try cleo.username()) liked your post")
        #expect(try PushTestSupport.waitForOutbox(in: app) { $0.isEmpty } != nil)
        #expect(receiver.received.count == 1)
        #expect(try MailTestSupport.metric(#"jobs_skipped_total{kind="push.deliver"}"#, of: app) == 3)
    }

    @Test func tokens_removedAreNotPosted_andMoveToWhoeverRegistersThem() throws {
        let receiver = try PushReceiver()
        let app = try PushTestSupport.start(pushingTo: receiver)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try ash.pushToken("apns", "gone-token").status == 200)
        #expect(try ash.pushToken("fcm", "shared-phone", device: "ash-pixel").status == 200)
        let removed = try ash.pushToken("apns", "gone-token", method: "DELETE")
        #expect(removed.status == 200 && removed.json["removed"] as? Bool == true)
        #expect(try ash.pushToken("apns", "gone-token", method: "DELETE").json["removed"] as? Bool == false)
        // Blair signs in on Ash's phone: the token is Blair's now, and Ash cannot remove it.
        let moved = try blair.pushToken("fcm", "shared-phone", device: "blair-on-pixel")
        #expect(moved.status == 200)
        let stored = try #require(moved.json["push_token"] as? [String: Any])
        #expect(stored["device_id"] as? String == "blair-on-pixel")
        #expect(try ash.pushToken("fcm", "shared-phone", method: "DELETE").json["removed"] as? Bool == false)

        let ashPost = try ash.createPost("Ash's")
        #expect(try blair.send("PUT", "/api/posts/\(ashPost.id)/like").status == 200)
        let toAsh = try #require(receiver.waitFor(1)?.first)
        #expect((toAsh.json["push_tokens"] as? [Any])?.isEmpty == true)

        let blairPost = try blair.createPost("Blair's")
        #expect(try ash.send("PUT", "/api/posts/\(blairPost.id)/like").status == 200)
        let toBlair = try #require(receiver.waitFor(2)?.last)
        let tokens = try #require(toBlair.json["push_tokens"] as? [[String: Any]])
        #expect(tokens.count == 1)
        #expect(tokens.first?["token"] as? String == "shared-phone" && tokens.first?["device_id"] as? String == "blair-on-pixel")
    }

    /// API.md "Feeds at any scale": a receiver's 410 `{"invalid_tokens":[…]}` removes those
    /// of the push's tokens (no one else's), and the push is done, not retried.
    @Test func a410_removesTheInvalidTokens_ofThatPushOnly() throws {
        let receiver = try PushReceiver()
        let app = try PushTestSupport.start(pushingTo: receiver)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try ash.pushToken("apns", "uninstalled").status == 200)
        #expect(try ash.pushToken("fcm", "still-here").status == 200)
        #expect(try blair.pushToken("apns", "blairs-phone").status == 200)
        receiver.reportInvalid(["uninstalled", "blairs-phone", "never-registered"])
        #expect(try blair.send("PUT", "/api/posts/\(try ash.createPost("Ash's").id)/like").status == 200)
        #expect(receiver.waitFor(1)?.count == 1)
        #expect(try PushTestSupport.waitForOutbox(in: app) { $0.isEmpty } != nil, "done, not retried")
        let left = try app.pool.withConnection { connection in
            try connection.query("SELECT token FROM push_tokens ORDER BY token").rows.map { try $0.decode("token", as: String.self) }
        }
        #expect(left == ["blairs-phone", "still-here"])
        #expect(receiver.received.count == 1)
    }

    /// A request in flight when the server stops is cut within about a second; its push
    /// stays in the outbox for a later try.
    @Test func stop_cutsARequestInFlight() throws {
        let receiver = try PushReceiver()
        let release = DispatchSemaphore(value: 0)
        defer { release.signal() }
        receiver.holdRequests(until: release)
        let app = try PushTestSupport.start(pushingTo: receiver)
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try blair.follow(try ash.userID()).status == 200)
        #expect(receiver.waitFor(1) != nil)
        let stopping = ContinuousClock.now
        app.stop()
        #expect(ContinuousClock.now - stopping < .seconds(3))
        // (The pool opens a connection again for this read.)
        let rows = try PushTestSupport.outbox(in: app)
        #expect(rows.count == 1 && rows.first?.failed == false)
        #expect(rows.first?.lastError?.contains("stopped while sending") == true)
    }

    /// A server killed while its push is on the wire (no outcome recorded) leaves the job
    /// leased; once the lease ends, another instance delivers it with the same
    /// `X-Posts-Delivery`, so the receiver can tell the second copy for what it is: at
    /// least once, never lost. (The lease's end is written into the job rather than waited.)
    @Test func aServerKilledMidDelivery_leavesThePushToTheNext_withTheSameDeliveryID() throws {
        let receiver = try PushReceiver()
        let release = DispatchSemaphore(value: 0)
        receiver.holdRequests(until: release)
        let database = try TestDatabase.makeDatabase()
        let environment = ["DATABASE_URL": database, "PORT": "0", "AUTH_MODE": "trust", "RATE_LIMIT_IP": "0",
                           "DB_POOL_SIZE": "2", "PUSH_WEBHOOK_URL": receiver.url, "PUSH_WEBHOOK_SECRET": PushTestSupport.secret,
                           "UPLOAD_DIR": ScratchDirectory.path("uploads")]
        let first = try ServerProcess(["serve", "--no-migrate"], environment: environment)
        let port = try #require(first.listeningPort())
        let ash = try APIClient(port: port)
        ash.headers["X-User-Email"] = "ash@example.com"
        let blair = try APIClient(port: port)
        blair.headers["X-User-Email"] = "blair@example.com"
        #expect(try blair.follow(try ash.userID()).status == 200)
        let held = try #require(receiver.waitFor(1)?.first)
        first.signal(SIGKILL)
        _ = first.waitForExit()
        for _ in 0..<10 { release.signal() }

        let admin = try PostgresConnection(conninfo: database)
        defer { admin.close() }
        let leased: String = try admin.query("SELECT state FROM jobs WHERE kind = 'push.deliver'").firstRow().decode("state")
        #expect(leased == "running")
        try admin.query("UPDATE jobs SET run_at = now() WHERE kind = 'push.deliver'")
        let second = try ServerProcess(["serve", "--no-migrate"], environment: environment)
        defer {
            second.signal(SIGTERM)
            #expect(second.waitForExit() == 0)
        }
        let again = try #require(receiver.waitFor(2)?.last)
        #expect(again.delivery == held.delivery)
        #expect(again.body == held.body)
        let gone = eventuallyValue(timeout: .seconds(20)) { () -> Bool? in
            // (The pruners' recurring jobs stay.)
            let left = try? admin.query("SELECT count(*) AS n FROM jobs WHERE NOT recurring").firstRow().decode("n", as: Int.self)
            return left == 0 ? true : nil
        }
        #expect(gone == true)
        #expect(receiver.received.count == 2)
    }

    /// The hour and the week: a push never tried within the hour fails without a try, one
    /// still failing at an hour old fails after its last try, a failure a week old goes.
    @Test func pastTheHour_pushesFail_andWeekOldFailuresGo() throws {
        let conninfo = try TestDatabase.makeDatabase()
        do {
            let quiet = try TestApplication.start(conninfo: conninfo)
            defer { quiet.stop() }
            let ash = try APIClient.user("ash@example.com", on: quiet)
            let blair = try APIClient.user("blair@example.com", on: quiet)
            for title in ["one", "two", "three"] {
                #expect(try blair.send("PUT", "/api/posts/\(try ash.createPost(title).id)/like").status == 200)
            }
            try quiet.pool.withConnection { connection in
                try connection.execute(unsafeSQL: """
                    INSERT INTO jobs (kind, payload, created_at, attempts, run_at, state, finished_at)
                    SELECT 'push.deliver', json_build_object('notification_id', id, 'delivery_id', gen_random_uuid()),
                           CASE rank WHEN 1 THEN now() - interval '2 hours' WHEN 2 THEN now() - interval '61 minutes'
                                     ELSE now() - interval '8 days' END,
                           CASE rank WHEN 2 THEN 3 ELSE 0 END, now(),
                           CASE rank WHEN 3 THEN 'dead' ELSE 'queued' END,
                           CASE rank WHEN 3 THEN now() - interval '8 days' END
                    FROM (SELECT id, row_number() OVER (ORDER BY id) AS rank FROM notifications) n
                    """)
            }
        }
        let receiver = try PushReceiver(failing: 100)
        let app = try TestApplication.start(conninfo: conninfo) {
            $0.push = try? PushSettings.parse(url: receiver.url, secret: PushTestSupport.secret)
        }
        defer { app.stop() }
        let rows = try #require(try PushTestSupport.waitForOutbox(in: app) { $0.count == 2 && $0.allSatisfy(\.failed) })
        #expect(rows[0].attempts == 0 && rows[0].lastError == "not tried within the delivery window")
        #expect(rows[1].attempts == 4 && rows[1].lastError == "HTTP 500: {\"error\":\"try later\"}")
        #expect(receiver.received.count == 1)
        // The counter moves once the runner hears back from the statement that failed them.
        #expect(try eventually { try MailTestSupport.metric(#"push_failed_total{provider="webhook",reason="expired"}"#, of: app) == 2 })
        #expect(try MailTestSupport.metric("push_queue_depth", of: app) == 0)
    }

    @Test func withoutPushURL_noOutboxRowIsWritten() throws {
        let app = try PushTestSupport.start(pushingTo: nil)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try ash.pushToken("apns", "a1b2c3").status == 200)
        let post = try ash.createPost("Hello")
        #expect(try blair.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        #expect(try blair.follow(try ash.userID()).status == 200)
        #expect(try PushTestSupport.count("notifications", in: app) == 2)
        #expect(try PushTestSupport.outbox(in: app).isEmpty)
        #expect(try MailTestSupport.metric(#"push_sent_total{provider="webhook"}"#, of: app) == 0)
        #expect(try MailTestSupport.metric("push_queue_depth", of: app) == 0)
    }
}
