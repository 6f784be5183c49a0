import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// Sign-in mail end to end against a real relay (aiosmtpd, started by the test): the code
/// arrives over STARTTLS with the headers API.md lists, signs in, and leaves no trace.
@Suite struct MailTests {
    @Test func codeByMail_overSTARTTLS_signsIn_andLeavesNoCodeBehind() throws {
        let relay = try SMTPRelay(.startTLS)
        let app = try MailTestSupport.start(smtpURL: MailTestSupport.url(for: relay), caFile: relay.certificateFile)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let asked = ContinuousClock.now
        #expect(try client.send("POST", "/api/auth/send-code", json: ["email": "Ash@Example.com"]).status == 200)
        let message = try #require(relay.waitForMessages(1, timeout: .seconds(5))?.first)
        #expect(ContinuousClock.now - asked < .seconds(5))

        #expect(message.usedTLS)
        #expect(message.mailFrom == "noreply@posts.test")
        #expect(message.recipients == ["ash@example.com"])
        let head = try #require(message.data.components(separatedBy: "\r\n\r\n").first)
        for header in ["From: Posts <noreply@posts.test>", "To: ash@example.com", "MIME-Version: 1.0",
                       "Content-Type: text/plain; charset=utf-8"] {
            #expect(head.contains(header + "\r\n") || head.hasSuffix(header), "\(header)")
        }
        #expect(head.firstMatch(of: /\r\nDate: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d \+0000\r\n/) != nil)
        #expect(head.firstMatch(of: /\r\nMessage-ID: <[0-9a-f-]+@posts\.test>\r\n/) != nil)
        let code = try MailTestSupport.code(in: message)
        #expect(message.data.contains("Your sign-in code is \(code)."))

        let verified = try client.send("POST", "/api/auth/verify-code", json: ["email": "ash@example.com", "code": code])
        #expect(verified.status == 200)
        #expect((verified.json["token"] as? String)?.count == 43)

        // Marked sent, then its job recorded done and gone (the counters count it by then).
        let row = try #require(try MailTestSupport.waitForRow("ash@example.com", in: app) { $0.sent && $0.attempts == nil })
        #expect(!row.failed && row.subject.isEmpty && row.body.isEmpty, "its job is done and gone")
        #expect(try MailTestSupport.tablesHolding(code, in: app) == [])
        #expect(try MailTestSupport.health(of: app)["mail"] as? String == "ok")
        #expect(try eventually { try MailTestSupport.metric("mail_sent_total", of: app) == 1 })
        #expect(try MailTestSupport.metric("mail_failed_total", of: app) == 0)
        #expect(try MailTestSupport.metric("mail_queue_depth", of: app) == 0)
        #expect(try MailTestSupport.metric("mail_oldest_unsent_seconds", of: app) == 0)
        #expect(relay.messages.count == 1)
    }

    @Test func authenticatedRelay_getsTheMessage_andAWrongPasswordGetsNothing() throws {
        let relay = try SMTPRelay(.authenticated(user: "mailer", password: "p@ss:word%"))
        let app = try MailTestSupport.start(smtpURL: MailTestSupport.url(for: relay, credentials: "mailer:p%40ss%3Aword%25@"),
                                            caFile: relay.certificateFile)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        #expect(try client.send("POST", "/api/auth/send-code", json: ["email": "blair@example.com"]).status == 200)
        let message = try #require(relay.waitForMessages(1)?.first)
        #expect(message.authenticated && message.usedTLS)
        #expect(message.recipients == ["blair@example.com"])

        let wrong = try MailTestSupport.start(smtpURL: MailTestSupport.url(for: relay, credentials: "mailer:nope@"),
                                              caFile: relay.certificateFile)
        defer { wrong.stop() }
        #expect(try APIClient(port: wrong.server.port).send("POST", "/api/auth/send-code", json: ["email": "cy@example.com"]).status == 200)
        let refused = try #require(try MailTestSupport.waitForRow("cy@example.com", in: wrong) { $0.lastError != nil })
        #expect(!refused.sent && !refused.failed)
        #expect(try MailTestSupport.health(of: wrong)["mail"] as? String == "failing")
        #expect(relay.messages.count == 1)
    }

    @Test func smtps_speaksTLSFromTheFirstByte() throws {
        let relay = try SMTPRelay(.implicitTLS)
        let app = try MailTestSupport.start(smtpURL: "smtps://127.0.0.1:\(relay.port)", caFile: relay.certificateFile)
        defer { app.stop() }
        #expect(try APIClient(port: app.server.port).send("POST", "/api/auth/send-code", json: ["email": "jo@example.com"]).status == 200)
        let message = try #require(relay.waitForMessages(1)?.first)
        #expect(message.usedTLS && message.recipients == ["jo@example.com"])
    }

    /// A certificate the CA file does not vouch for is a TLS failure: nothing is sent.
    @Test func untrustedCertificate_getsNothing() throws {
        let relay = try SMTPRelay(.startTLS)
        let app = try MailTestSupport.start(smtpURL: MailTestSupport.url(for: relay))
        defer { app.stop() }
        #expect(try APIClient(port: app.server.port).send("POST", "/api/auth/send-code", json: ["email": "kim@example.com"]).status == 200)
        let row = try #require(try MailTestSupport.waitForRow("kim@example.com", in: app) { $0.lastError != nil })
        #expect(!row.sent && !row.failed)
        #expect(relay.messages.isEmpty)
    }

    /// STARTTLS is required, not opportunistic: a relay that does not offer it gets nothing,
    /// and the message waits for a retry.
    @Test func relayWithoutSTARTTLS_getsNothingInClear() throws {
        let relay = try SMTPRelay(.plain)
        let app = try MailTestSupport.start(smtpURL: MailTestSupport.url(for: relay))
        defer { app.stop() }
        #expect(try APIClient(port: app.server.port).send("POST", "/api/auth/send-code", json: ["email": "dee@example.com"]).status == 200)
        let row = try #require(try MailTestSupport.waitForRow("dee@example.com", in: app) { ($0.attempts ?? 0) >= 2 })
        #expect(!row.sent && !row.failed)
        #expect(row.lastError?.isEmpty == false)
        #expect(relay.messages.isEmpty)
        #expect(try MailTestSupport.health(of: app)["mail"] as? String == "failing")
        #expect(try MailTestSupport.metric("mail_queue_depth", of: app) == 1)
    }

    @Test func headerInjectionAddresses_are422_andReachNoOutbox() throws {
        let relay = try SMTPRelay(.plain)
        let app = try MailTestSupport.start(smtpURL: MailTestSupport.url(for: relay, inClear: true))
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let attempts = [
            "ash@example.com\r\nBcc: victim@example.com", "ash@example.com\nBcc: victim@example.com",
            "ash@example.com\rX: y", "ash@example.com>\r\nRCPT TO:<victim@example.com", "<ash@example.com>",
            "ash@example.com, victim@example.com", "ash@example.com,victim@example.com", "ash @example.com",
            "ash@example.com victim@example.com", "ash@exa\u{0}mple.com", "ash@example.com\u{7F}", "ash@ex@ample.com",
            "Ash <ash@example.com>", "ash@example.com;victim@example.com", "ash\u{85}@example.com",
            String(repeating: "a", count: 60) + "@" + String(repeating: "b", count: 195) + ".com",
        ]
        for address in attempts {
            let response = try client.send("POST", "/api/auth/send-code", json: ["email": address])
            #expect(response.status == 422, "\(address.debugDescription)")
            #expect(response.json["error"] as? String == "validation_failed")
        }
        let count: Int = try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM outbox").firstRow().decode("n") }
        #expect(count == 0)
    }

    @Test func health_saysNotConfiguredWithoutSMTP() throws {
        let app = try MailTestSupport.start(smtpURL: nil)
        defer { app.stop() }
        let health = try APIClient(port: app.server.port).get("/api/health")
        #expect(health.status == 200)
        #expect(health.text == #"{"status":"success","database":"ok","mail":"not_configured","storage":"ok","push":{"webhook":"not_configured","apns":"not_configured","fcm":"not_configured","webpush":"not_configured"},"replicas":[]}"#)
        #expect(try MailTestSupport.metric("mail_sent_total", of: app) == 0)
    }
}
