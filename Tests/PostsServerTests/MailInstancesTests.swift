import Foundation
import Postgres
import Testing
import TestSupport

/// The mailer across server processes: two instances on one database share the outbox
/// without sending anything twice; a token-mode start without SMTP says codes will not go.
@Suite struct MailInstancesTests {
    @Test func twoServers_tenCodes_tenMessages_noneTwice() throws {
        let relay = try SMTPRelay(.plain)
        let database = try TestDatabase.makeDatabase()
        let environment = ["DATABASE_URL": database, "PORT": "0", "RATE_LIMIT_IP": "0", "DB_POOL_SIZE": "2",
                           "SMTP_URL": "smtp://127.0.0.1:\(relay.port)?starttls=off", "MAIL_FROM": "noreply@posts.test",
                           "UPLOAD_DIR": ScratchDirectory.path("uploads")]
        let servers = try (0..<2).map { _ in try ServerProcess(["serve", "--no-migrate"], environment: environment) }
        defer {
            // The mailers stop with their servers: a clean exit, within the stop's time.
            for server in servers {
                server.signal(SIGTERM)
                #expect(server.waitForExit() == 0)
            }
        }
        let clients = try servers.map { try APIClient(port: try #require($0.listeningPort())) }
        let recipients = (0..<10).map { "user\($0)@example.com" }
        for (index, recipient) in recipients.enumerated() {
            #expect(try clients[index % 2].send("POST", "/api/auth/send-code", json: ["email": recipient]).status == 200)
        }
        #expect(relay.waitForMessages(10) != nil)
        let admin = try PostgresConnection(conninfo: database)
        defer { admin.close() }
        let allSent = eventuallyValue(timeout: .seconds(20)) { () -> Bool? in
            // Sent, and each job's outcome recorded (its job gone, the counters counted).
            let unsent = try? admin.query("""
                SELECT (SELECT count(*) FROM outbox WHERE sent_at IS NULL) + (SELECT count(*) FROM jobs WHERE kind = 'mail.send') AS n
                """).firstRow().decode("n", as: Int.self)
            return unsent == 0 ? true : nil
        }
        #expect(allSent == true)
        let delivered = relay.messages.flatMap(\.recipients)
        #expect(delivered.count == 10)
        #expect(Set(delivered) == Set(recipients))
        // Each message was tried once, by one instance: ten sent between them, none skipped
        // (an instance finding a message already sent by the other would skip it).
        var sent = 0.0, skipped = 0.0
        for server in servers {
            let probe = MetricsProbe(port: try #require(server.listeningPort()))
            sent += try probe.value("mail_sent_total") ?? 0
            skipped += try probe.value("jobs_skipped_total{kind=\"mail.send\"}") ?? 0
        }
        #expect(sent == 10 && skipped == 0)
    }

    @Test func tokenModeWithoutSMTP_saysOnceThatCodesWillNotBeDelivered() throws {
        let database = try TestDatabase.makeDatabase()
        let server = try ServerProcess(["serve", "--no-migrate"], environment: [
            "DATABASE_URL": database, "PORT": "0", "UPLOAD_DIR": ScratchDirectory.path("uploads")])
        #expect(server.waitForLine(containing: "sign-in codes will not be delivered") != nil)
        let port = try #require(server.listeningPort())
        let health = try APIClient(port: port).get("/api/health")
        #expect(health.json["mail"] as? String == "not_configured")
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)
        #expect(server.lines.filter { $0.contains("will not be delivered") }.count == 1)
    }

    @Test func invalidSMTPSettings_stopTheStart_withoutShowingThePassword() throws {
        let database = try TestDatabase.makeDatabase()
        let cases: [([String: String], String)] = [
            (["SMTP_URL": "smtp://user:hunter2@mail.example.com?starttls=off", "MAIL_FROM": "a@b.c"], "loopback"),
            (["SMTP_URL": "smtp://user:hunter2@mail.example.com"], "MAIL_FROM"),
            (["SMTP_URL": "http://user:hunter2@mail.example.com", "MAIL_FROM": "a@b.c"], "SMTP_URL"),
            (["SMTP_URL": "smtp://mail.example.com", "MAIL_FROM": "Posts <a@b.c>", "SMTP_CA_FILE": "/nonexistent.pem"], "SMTP_CA_FILE"),
        ]
        for (settings, named) in cases {
            let server = try ServerProcess(["serve", "--no-migrate"], environment: settings.merging(["DATABASE_URL": database, "PORT": "0"]) { $1 })
            #expect(server.waitForExit() != 0)
            let output = server.lines.joined(separator: "\n")
            #expect(output.contains(named), "\(output)")
            #expect(!output.contains("hunter2"))
        }
    }
}
