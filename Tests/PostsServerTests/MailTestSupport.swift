import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// An in-process server whose mailer sends to a test relay, and what the mail tests read
/// back from its database.
enum MailTestSupport {
    static let sender = "Posts <noreply@posts.test>"

    /// `SMTP_URL` for the relay: STARTTLS required unless the relay is plain and `inClear`.
    static func url(for relay: SMTPRelay, credentials: String = "", inClear: Bool = false) -> String {
        "smtp://\(credentials)127.0.0.1:\(relay.port)" + (inClear ? "?starttls=off" : "")
    }

    static func start(smtpURL: String?, caFile: String? = nil, authMode: Configuration.AuthMode = .token,
                      conninfo: String? = nil, clock: ServerClock = ServerClock()) throws -> Application {
        let mail = try MailSettings.parse(smtpURL: smtpURL, mailFrom: sender, caFile: caFile)
        return try TestApplication.start(conninfo: conninfo, clock: clock) { configuration in
            configuration.authMode = authMode
            configuration.mail = mail
        }
    }

    /// An outbox message and its delivery job (`attempts` and `lastError` are the job's: nil
    /// once it is done and gone).
    struct Row {
        let attempts: Int?
        let sent: Bool
        let failed: Bool
        let lastError: String?
        let subject: String
        let body: String
    }

    /// The newest outbox row for `recipient`, with its job.
    static func row(for recipient: String, in app: Application) throws -> Row? {
        try app.pool.withConnection { connection in
            try connection.query("""
                SELECT j.attempts, o.sent_at IS NOT NULL AS sent, o.failed_at IS NOT NULL AS failed, j.last_error, o.subject, o.body
                FROM outbox o LEFT JOIN jobs j ON j.kind = 'mail.send' AND (j.payload ->> 'outbox_id')::bigint = o.id
                WHERE o.recipient = \(recipient) ORDER BY o.id DESC LIMIT 1
                """).rows.first.map { row in
                Row(attempts: try row.decode("attempts"), sent: try row.decode("sent"), failed: try row.decode("failed"),
                    lastError: try row.decode("last_error"), subject: try row.decode("subject"), body: try row.decode("body"))
            }
        }
    }

    /// Polls the newest row for `recipient` until `condition` holds (20 s at most).
    static func waitForRow(_ recipient: String, in app: Application, _ condition: (Row) -> Bool) throws -> Row? {
        try eventuallyValue(timeout: .seconds(20)) {
            try row(for: recipient, in: app).flatMap { condition($0) ? $0 : nil }
        }
    }

    /// The six digits of a delivered message's subject.
    static func code(in message: SMTPRelay.Message) throws -> String {
        try #require(message.data.firstMatch(of: /Subject: Your sign-in code: ([0-9]{6})/)).output.1.description
    }

    /// The tables in which some row, any column (text, bytea as hex), contains `needle`.
    static func tablesHolding(_ needle: String, in app: Application) throws -> [String] {
        let hex = needle.utf8.map { String(format: "%02x", $0) }.joined()
        return try app.pool.withConnection { connection in
            let tables: [String] = try connection.query("""
                SELECT table_name::text AS name FROM information_schema.tables
                WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
                """).rows.map { try $0.decode("name") }
            return try tables.filter { table in
                // The names come from the catalog, quoted as identifiers; the needles are binds.
                let quoted = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                let query: SQLQuery = """
                    SELECT count(*) AS n FROM \(unsafeSQL: quoted) t
                    WHERE t::text LIKE \("%" + needle + "%") OR t::text LIKE \("%" + hex + "%")
                    """
                return try connection.query(query).firstRow().decode("n", as: Int.self) > 0
            }
        }
    }

    static func health(of app: Application) throws -> [String: Any] {
        try APIClient(port: app.server.port).get("/api/health").json
    }

    /// A sample's value from /metrics.
    static func metric(_ name: String, of app: Application) throws -> Double? {
        let text = try APIClient(port: app.server.port).get("/metrics").text
        return text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
    }
}
