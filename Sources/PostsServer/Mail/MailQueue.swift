import Foundation
import Postgres

/// The mailer's statements over `outbox`, each its own short transaction: a claim commits
/// before anything is sent, so no connection or row lock is held while SMTP blocks.
struct MailQueue: Sendable {
    let pool: ConnectionPool
    /// Token mode erases a message's subject and body once it is delivered or failed (the
    /// code must not rest in the database); trust mode keeps them for the dev mailbox.
    let erasesFinished: Bool

    /// API.md: a message is retried until it is this old, then failed.
    static let deliveryWindowSeconds = 15 * 60
    /// How long a claimed row is left to its sender: a claim's batch (`Mailer.batch`) times
    /// the transfer's 30 s timeout, so only a mailer that died gives rows up, and then
    /// another instance takes them.
    static let leaseSeconds = 120

    struct Claimed: Sendable {
        let id: Int64
        let recipient: String
        let subject: String
        let body: String
        let createdAt: Date
        let messageID: String
        /// Tries so far, this one included.
        let attempts: Int
    }

    /// Fails the messages that were never tried and are already past the window (a backlog
    /// from before any mailer ran): their codes are long dead.
    func failStale() throws {
        try pool.withConnection { connection in
            try connection.query("""
                WITH stale AS (
                    SELECT id FROM outbox
                    WHERE sent_at IS NULL AND failed_at IS NULL AND attempts = 0
                      AND created_at < now() - make_interval(secs => \(Self.deliveryWindowSeconds))
                    ORDER BY created_at, id LIMIT 1000 FOR UPDATE SKIP LOCKED
                )
                UPDATE outbox o SET failed_at = now(), last_error = 'not tried within the delivery window',
                    subject = CASE WHEN \(erasesFinished) THEN '' ELSE o.subject END,
                    body = CASE WHEN \(erasesFinished) THEN '' ELSE o.body END
                FROM stale WHERE o.id = stale.id
                """)
        }
    }

    /// Up to `limit` due messages, oldest first, each marked as being tried (one more
    /// attempt, a lease, a Message-ID fixed at the first try). Rows another instance has
    /// locked are skipped, never waited for: N mailers never take the same row. One
    /// statement, so one round trip and atomic by itself.
    func claim(limit: Int, messageIDDomain: Substring) throws -> [Claimed] {
        try pool.withConnection { connection in
            try connection.query("""
                WITH due AS (
                    SELECT id FROM outbox
                    WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now()
                    ORDER BY created_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED
                )
                UPDATE outbox o SET attempts = o.attempts + 1,
                    next_attempt_at = now() + make_interval(secs => \(Self.leaseSeconds)),
                    message_id = coalesce(o.message_id, '<' || gen_random_uuid() || '@' || \(String(messageIDDomain)) || '>')
                FROM due WHERE o.id = due.id
                RETURNING o.id, o.recipient, o.subject, o.body, o.created_at, o.message_id, o.attempts
                """).rows.map { row in
                Claimed(id: try row.decode("id"), recipient: try row.decode("recipient"), subject: try row.decode("subject"),
                        body: try row.decode("body"), createdAt: try row.decode("created_at"),
                        messageID: try row.decode("message_id"), attempts: try row.decode("attempts"))
            }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    /// Claimed messages this mailer will not try after all (it is stopping, or the relay
    /// just failed another message of the batch): due again at once, the try not counted.
    func release(_ ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try pool.withConnection { connection in
            try connection.query("""
                UPDATE outbox SET attempts = attempts - 1, next_attempt_at = now()
                WHERE id = ANY(\(PostgresArray(ids))) AND sent_at IS NULL AND failed_at IS NULL
                """)
        }
    }

    /// After the relay's final 250 to each.
    func markSent(_ ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try pool.withConnection { connection in
            try connection.query("""
                UPDATE outbox SET sent_at = now(), last_error = NULL,
                    subject = CASE WHEN \(erasesFinished) THEN '' ELSE subject END,
                    body = CASE WHEN \(erasesFinished) THEN '' ELSE body END
                WHERE id = ANY(\(PostgresArray(ids)))
                """)
        }
    }

    /// A 5xx reply (or a row no relay could take): given up at once.
    func markFailed(_ id: Int64, error: String) throws {
        try pool.withConnection { connection in
            try connection.query("""
                UPDATE outbox SET failed_at = now(), last_error = \(String(error.prefix(500))),
                    subject = CASE WHEN \(erasesFinished) THEN '' ELSE subject END,
                    body = CASE WHEN \(erasesFinished) THEN '' ELSE body END
                WHERE id = \(id)
                """)
        }
    }

    /// A failure worth another try: the next one after `MailRetry`'s delay, but never past
    /// the window's end; a message already at the end of its window fails instead.
    /// Returns true when it failed.
    @discardableResult
    func scheduleRetry(_ message: Claimed, error: String) throws -> Bool {
        let delay = MailRetry.delaySeconds(afterAttempt: message.attempts)
        return try pool.withConnection { connection in
            try connection.query("""
                WITH target AS (
                    SELECT id, created_at + make_interval(secs => \(Self.deliveryWindowSeconds)) <= now() AS expired
                    FROM outbox WHERE id = \(message.id)
                )
                UPDATE outbox o SET last_error = \(String(error.prefix(500))),
                    failed_at = CASE WHEN target.expired THEN now() END,
                    next_attempt_at = least(now() + make_interval(secs => \(delay)),
                                            o.created_at + make_interval(secs => \(Self.deliveryWindowSeconds))),
                    subject = CASE WHEN target.expired AND \(erasesFinished) THEN '' ELSE o.subject END,
                    body = CASE WHEN target.expired AND \(erasesFinished) THEN '' ELSE o.body END
                FROM target WHERE o.id = target.id
                RETURNING target.expired
                """).rows.first?.decode("expired") ?? false
        }
    }

    struct Depth: Sendable {
        let unsent: Int
        let oldestSeconds: Double
    }

    /// What waits to be delivered, on every instance together.
    func depth() throws -> Depth {
        let row = try pool.withConnection { connection in
            try connection.query("""
                SELECT count(*) AS unsent, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest
                FROM outbox WHERE sent_at IS NULL AND failed_at IS NULL
                """).firstRow()
        }
        return Depth(unsent: try row.decode("unsent"), oldestSeconds: try row.decode("oldest"))
    }
}
