import Foundation
import Postgres

/// Delivers the outbox over SMTP: the `mail.send` jobs (`JobKind.mail`), one per message.
/// A batch reads its messages (fixing each one's Message-ID at its first try, so retries
/// carry the same), sends them over one relay connection with no database connection
/// held, then marks what was sent. A message is marked sent only after the relay's 250 to
/// the final dot: a crash between the two may send it twice, never zero times.
final class MailDelivery: JobHandler {
    private let settings: MailSettings
    private let client: SMTPClient
    /// Token mode erases a message's subject and body once it is delivered or failed (the
    /// code must not rest in the database); trust mode keeps them for the dev mailbox.
    private let erasesFinished: Bool

    init(settings: MailSettings, erasesFinished: Bool, cancellation: CurlTransfer.Cancellation) throws {
        self.settings = settings
        self.erasesFinished = erasesFinished
        client = try SMTPClient(settings: settings, cancellation: cancellation)
    }

    /// The mail kind's place in the job runner.
    static func worker(settings: MailSettings, erasesFinished: Bool) -> JobWorker {
        JobWorker(kind: .mail, makeHandler: { cancellation in
            try MailDelivery(settings: settings, erasesFinished: erasesFinished, cancellation: cancellation)
        }, died: { payloads, context in
            try markFailed(outboxIDsIn: payloads, erasing: erasesFinished, context: context)
        })
    }

    private struct Message {
        let outboxID: Int64
        let recipient: String
        let subject: String
        let body: String
        let createdAt: Date
        let messageID: String
    }

    func perform(_ jobs: [ClaimedJob], context: JobContext) throws -> [JobOutcome] {
        let messages = try load(jobs, on: context.pool)
        var sent: [Int64] = []
        let outcomes = context.tryInOrder(jobs) { job in
            // Sent, failed or pruned meanwhile (an external mailer may share the outbox).
            guard let message = messages[job.id] else { return .skipped }
            switch send(message) {
            case .delivered:
                sent.append(message.outboxID)
                return .done
            case .rejected(let reason):
                // Marked failed by `died`, once the job's death is recorded: whoever sees
                // the message failed sees why, and the counter with it.
                return .dead(reason)
            case .retry(let reason):
                return .retry(reason)
            }
        }
        // What was sent is done whatever follows: failing to mark the rows (the database
        // gone for a moment) must not send them again. They stay unmarked (and, in token
        // mode, unerased until the pruner's 24 hours).
        do {
            try mark(sent: sent, context: context)
        } catch {
            context.logger.warning("delivered messages could not be marked sent", metadata: ["error": "\(error)"])
        }
        return outcomes
    }

    private func send(_ message: Message) -> SMTPOutcome {
        // Rows may come from an external writer: nothing that could inject a header or a
        // second recipient reaches SMTP.
        guard EmailAddress.isPlausibleMailbox(message.recipient) else {
            return .rejected("the recipient is not one plausible mailbox")
        }
        return client.send(MailMessage(from: settings.from, to: message.recipient, subject: message.subject,
                                       body: message.body, date: message.createdAt, messageID: message.messageID))
    }

    /// The jobs' messages still to send, by job, each with its Message-ID fixed.
    private func load(_ jobs: [ClaimedJob], on pool: ConnectionPool) throws -> [Int64: Message] {
        let domain = String(settings.from.domain)
        return try pool.withRetriedStatement { connection in
            var messages: [Int64: Message] = [:]
            for row in try connection.query("""
                UPDATE outbox o SET message_id = coalesce(o.message_id, '<' || gen_random_uuid() || '@' || \(domain) || '>')
                FROM jobs j
                WHERE j.id = ANY(\(PostgresArray(jobs.map(\.id)))) AND o.id = \(JobPayload.member(.outboxID, of: "j.payload", as: "bigint"))
                  AND o.sent_at IS NULL AND o.failed_at IS NULL
                RETURNING j.id AS job_id, o.id, o.recipient, o.subject, o.body, o.created_at, o.message_id
                """).rows {
                messages[try row.decode("job_id")] = Message(
                    outboxID: try row.decode("id"), recipient: try row.decode("recipient"), subject: try row.decode("subject"),
                    body: try row.decode("body"), createdAt: try row.decode("created_at"), messageID: try row.decode("message_id"))
            }
            return messages
        }
    }

    private func mark(sent: [Int64], context: JobContext) throws {
        guard !sent.isEmpty else { return }
        try context.pool.withRetriedStatement { connection in
            try connection.query("""
                UPDATE outbox SET sent_at = \(context.clock.now),
                    subject = CASE WHEN \(erasesFinished) THEN '' ELSE subject END,
                    body = CASE WHEN \(erasesFinished) THEN '' ELSE body END
                WHERE id = ANY(\(PostgresArray(sent)))
                """)
        }
    }

    /// The messages of mail jobs that died (refused for good, or their window passed):
    /// failed, and erased.
    static func markFailed(outboxIDsIn payloads: [String], erasing: Bool, context: JobContext) throws {
        try context.pool.withRetriedStatement { connection in
            try connection.query("""
                UPDATE outbox SET failed_at = \(context.clock.now),
                    subject = CASE WHEN \(erasing) THEN '' ELSE subject END,
                    body = CASE WHEN \(erasing) THEN '' ELSE body END
                WHERE id IN (SELECT \(JobPayload.member(.outboxID, of: "p::json", as: "bigint")) FROM unnest(\(PostgresArray(payloads))) AS p)
                  AND sent_at IS NULL AND failed_at IS NULL
                """)
        }
    }
}
