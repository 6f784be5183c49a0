import Postgres

/// Messages for people, written to the `outbox` table in the same transaction as what they
/// announce; any mailer can deliver them (and set `sent_at`). Development reads them back
/// through the mailbox route instead.
struct Outbox: Sendable {
    let pool: ConnectionPool

    struct Message: Sendable {
        let recipient: String
        let subject: String
        let body: String
        let createdAt: PostgresTimestamp
    }

    func enqueue(to recipient: String, subject: String, body: String, on connection: PostgresConnection) throws {
        try connection.query("INSERT INTO outbox (recipient, subject, body) VALUES (\(recipient), \(subject), \(body))")
    }

    /// What the outbox holds for an address, newest first (at most the latest 100).
    func messages(for recipient: String) throws -> [Message] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT recipient, subject, body, created_at FROM outbox WHERE recipient = \(recipient)
                ORDER BY created_at DESC, id DESC LIMIT 100
                """).rows.map { row in
                Message(recipient: try row.decode("recipient"), subject: try row.decode("subject"),
                        body: try row.decode("body"), createdAt: try row.decode("created_at"))
            }
        }
    }
}
