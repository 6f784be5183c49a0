import Postgres

/// Messages for people, written to the `outbox` table in the same transaction as what they
/// announce. With `SMTP_URL` each message also gets a `mail.send` job (`MailDelivery`);
/// without it any external mailer can deliver them (and set `sent_at`). Development reads
/// them back through the mailbox route.
struct Outbox: Sendable {
    let pool: ConnectionPool
    let jobs: JobScheduler
    /// A message's `created_at` (its mail's `Date`, its 24 hours in the table) is its now.
    let clock: ServerClock

    struct Message: Sendable {
        let recipient: String
        let subject: String
        let body: String
        let createdAt: PostgresTimestamp
    }

    func enqueue(to recipient: String, subject: String, body: String, on connection: PostgresConnection) throws {
        let id = try connection.query("""
            INSERT INTO outbox (recipient, subject, body, created_at) VALUES (\(recipient), \(subject), \(body), \(clock.now))
            RETURNING id
            """).firstRow().decode("id", as: Int64.self)
        try jobs.enqueue(.mail, [JobPayload.mail(outbox: id)], on: connection)
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

    struct Depth: Sendable {
        let unsent: Int
        let oldestSeconds: Double
    }

    /// What waits to be delivered, whoever delivers it, on every instance together.
    func depth() throws -> Depth {
        let row = try pool.withConnection { connection in
            try connection.query("""
                SELECT count(*) AS unsent, coalesce(extract(epoch FROM \(clock.now) - min(created_at)), 0)::float8 AS oldest
                FROM outbox WHERE sent_at IS NULL AND failed_at IS NULL
                """).firstRow()
        }
        return Depth(unsent: try row.decode("unsent"), oldestSeconds: try row.decode("oldest"))
    }
}
