import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// API.md's retry rule against a real relay: transient failures are retried with backoff
/// and end in exactly one copy; a 5xx reply fails the message at once.
@Suite struct MailFailureTests {
    @Test func relayDownThenUp_deliversExactlyOneCopy() throws {
        let relay = try SMTPRelay(.plain)
        relay.stop()
        let app = try MailTestSupport.start(smtpURL: MailTestSupport.url(for: relay, inClear: true))
        defer { app.stop() }
        #expect(try APIClient(port: app.server.port).send("POST", "/api/auth/send-code", json: ["email": "eve@example.com"]).status == 200)
        let refused = try #require(try MailTestSupport.waitForRow("eve@example.com", in: app) { $0.lastError != nil })
        #expect(!refused.sent && !refused.failed && (refused.attempts ?? 0) >= 1)
        #expect(try MailTestSupport.health(of: app)["mail"] as? String == "failing")

        try relay.start()
        let messages = try #require(relay.waitForMessages(1))
        #expect(messages.first?.recipients == ["eve@example.com"])
        // Sent and its job recorded done (health has seen the success by then).
        _ = try #require(try MailTestSupport.waitForRow("eve@example.com", in: app) { $0.sent && $0.attempts == nil })
        #expect(relay.messages.count == 1)
        #expect(try MailTestSupport.health(of: app)["mail"] as? String == "ok")
    }

    /// The retry comes after the backoff, which the test's clock skips rather than waits.
    @Test func a451ThenSuccess_deliversOneCopy() throws {
        let relay = try SMTPRelay(.plain)
        try relay.refuseNext(1, with: 451, at: .data)
        let clock = ServerClock()
        let app = try MailTestSupport.start(smtpURL: MailTestSupport.url(for: relay, inClear: true), clock: clock)
        defer { app.stop() }
        #expect(try APIClient(port: app.server.port).send("POST", "/api/auth/send-code", json: ["email": "fay@example.com"]).status == 200)
        // (On a slow machine the real second may pass first: the message is then sent already.)
        let refused = try #require(try MailTestSupport.waitForRow("fay@example.com", in: app) { $0.lastError != nil || $0.sent })
        if !refused.sent {
            #expect(refused.attempts == 1 && refused.lastError?.contains("451") == true && !refused.failed)
        }
        clock.advance(by: .seconds(1))
        #expect(relay.waitForMessages(1) != nil)
        // Marked sent, then its job recorded done and gone (the counters count it by then).
        #expect(try MailTestSupport.waitForRow("fay@example.com", in: app) { $0.sent && $0.attempts == nil } != nil)
        #expect(relay.messages.count == 1)
        #expect(try eventually { try MailTestSupport.metric("mail_sent_total", of: app) == 1 })
    }

    @Test func a550_failsAtOnce_andIsNotRetried() throws {
        let relay = try SMTPRelay(.plain)
        try relay.refuseNext(1, with: 550, at: .rcpt)
        let app = try MailTestSupport.start(smtpURL: MailTestSupport.url(for: relay, inClear: true))
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        #expect(try client.send("POST", "/api/auth/send-code", json: ["email": "gus@example.com"]).status == 200)
        let row = try #require(try MailTestSupport.waitForRow("gus@example.com", in: app) { $0.failed })
        #expect(row.attempts == 1 && !row.sent)
        #expect(row.lastError?.contains("550") == true)
        #expect(row.subject.isEmpty && row.body.isEmpty)
        #expect(try eventually { try MailTestSupport.metric("mail_failed_total", of: app) == 1 })
        #expect(try MailTestSupport.health(of: app)["mail"] as? String == "failing")

        // The next message goes through, and the failed one is not sent with it.
        #expect(try client.send("POST", "/api/auth/send-code", json: ["email": "hal@example.com"]).status == 200)
        let delivered = try #require(relay.waitForMessages(1))
        #expect(delivered.map(\.recipients) == [["hal@example.com"]])
        _ = try MailTestSupport.waitForRow("hal@example.com", in: app) { $0.sent }
        #expect(try MailTestSupport.row(for: "gus@example.com", in: app)?.attempts == 1)
        #expect(relay.messages.count == 1)
    }

    /// Messages written while no mailer ran and already past the 15-minute window fail
    /// unsent (their codes are long dead); the fresh ones go.
    @Test func aBacklogPastTheWindow_failsUnsent() throws {
        let relay = try SMTPRelay(.plain)
        let database = try TestDatabase.makeDatabase()
        let writer = try PostgresConnection(conninfo: database)
        try writer.query("""
            WITH messages AS (
                INSERT INTO outbox (recipient, subject, body, created_at) VALUES
                    ('old@example.com', 'Your sign-in code: 111111', 'old', now() - interval '20 minutes'),
                    ('new@example.com', 'Your sign-in code: 222222', 'new', now())
                RETURNING id, created_at
            )
            INSERT INTO jobs (kind, payload, created_at, run_at)
            SELECT 'mail.send', json_build_object('outbox_id', id), created_at, created_at FROM messages
            """)
        writer.close()
        let app = try MailTestSupport.start(smtpURL: MailTestSupport.url(for: relay, inClear: true), conninfo: database)
        defer { app.stop() }
        let old = try #require(try MailTestSupport.waitForRow("old@example.com", in: app) { $0.failed })
        #expect(old.attempts == 0 && !old.sent && old.subject.isEmpty && old.body.isEmpty)
        #expect(old.lastError == "not tried within the delivery window")
        _ = try MailTestSupport.waitForRow("new@example.com", in: app) { $0.sent }
        #expect(relay.messages.map(\.recipients) == [["new@example.com"]])
    }

    /// Trust mode keeps a delivered message for the dev mailbox, which still shows it.
    @Test func trustMode_keepsTheDeliveredBodyForTheMailbox() throws {
        let relay = try SMTPRelay(.plain)
        let app = try MailTestSupport.start(smtpURL: MailTestSupport.url(for: relay, inClear: true), authMode: .trust)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        #expect(try client.send("POST", "/api/auth/send-code", json: ["email": "ida@example.com"]).status == 200)
        let message = try #require(relay.waitForMessages(1)?.first)
        let row = try #require(try MailTestSupport.waitForRow("ida@example.com", in: app) { $0.sent })
        let code = try MailTestSupport.code(in: message)
        #expect(row.body.contains(code))
        let mailbox = try client.get("/api/dev/mailbox?email=ida@example.com")
        #expect(mailbox.text.contains(code))
    }
}
