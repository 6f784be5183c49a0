import Foundation
import Logging
import Postgres
import Synchronization

/// Delivers the outbox over SMTP, on a thread of its own (never an event loop, never a
/// request's worker). Each round claims a few due messages oldest first and commits
/// (`MailQueue.claim`), sends them with no database connection held, then records each
/// outcome. A round starts when a writer nudges (`wake()`, after its commit) or after a
/// short poll, which picks up other instances' messages and retries that came due.
///
/// It has a database connection of its own (a pool of one): the request pool has exactly
/// one connection per worker, so a mailer borrowing from it would make a request wait.
final class Mailer: Sendable {
    private let settings: MailSettings
    private let pool: ConnectionPool
    private let queue: MailQueue
    private let logger: Logger
    private let rounds: RoundsThread
    private let counters = Mutex(Counters())

    /// Messages claimed at once: small, so that a slow relay cannot outlast the lease.
    static let batch = 4
    /// How often an idle mailer looks for due messages it was not nudged about.
    static let pollInterval: Duration = .seconds(1)
    /// How often it fails never-tried messages past the delivery window.
    static let staleCheckInterval: Duration = .seconds(30)

    struct Counters: Sendable {
        var sent = 0
        var failed = 0
        /// The health route's "failing": the last try on this instance failed.
        var lastTryFailed = false
    }

    init(settings: MailSettings, conninfo: String, erasesFinished: Bool, logger: Logger) {
        self.settings = settings
        pool = ConnectionPool(ConnectionPool.Configuration(conninfo: conninfo, size: 1))
        queue = MailQueue(pool: pool, erasesFinished: erasesFinished)
        self.logger = logger
        rounds = RoundsThread(name: "mailer", pollInterval: Self.pollInterval, upkeepInterval: Self.staleCheckInterval,
                              logger: logger, log: RoundsThread.Log(
                                  cannotStart: "the mailer cannot start; messages wait in the outbox",
                                  unreachable: "the mailer cannot reach the outbox; trying again",
                                  reachable: "the mailer reaches the database again"))
    }

    var statistics: Counters { counters.withLock { $0 } }

    /// A writer has committed a message: look now rather than at the next poll. Never blocks.
    func wake() {
        rounds.wake()
    }

    func start() {
        logger.info("mailer started", metadata: ["smtp": "\(settings)"])
        rounds.start(makeWorker: { [self] in try SMTPClient(settings: settings, cancellation: rounds.cancellation) },
                     upkeep: { [queue] in try queue.failStale() }, round: { [self] client in
            let claimed = try queue.claim(limit: Self.batch, messageIDDomain: settings.from.domain)
            return try deliver(claimed, with: client) && claimed.count == Self.batch
        })
    }

    /// Ends a transfer in progress within about a second (its message is retried later,
    /// here or on another instance), waits for the thread and closes its connection.
    func stop() {
        if rounds.stop() { pool.close() }
    }

    /// Sends the claimed messages in order; false when it stopped early (the relay failed
    /// one, or the mailer is stopping), the rest being given back untried.
    /// The batch's deliveries are marked sent together, in one statement at its end.
    private func deliver(_ claimed: [MailQueue.Claimed], with client: SMTPClient) throws -> Bool {
        var delivered: [Int64] = []
        for (index, message) in claimed.enumerated() {
            guard rounds.isRunning else {
                try queue.markSent(delivered)
                try queue.release(claimed[index...].map(\.id))
                return false
            }
            let outcome = send(message, with: client)
            if outcome == .delivered {
                delivered.append(message.id)
                counters.withLock { $0.sent += 1; $0.lastTryFailed = false }
                continue
            }
            try recordFailure(outcome, of: message)
            if case .retry = outcome {
                // The relay is likely down for the others too: they go back untried, and
                // the next rounds try one at a time while this one backs off.
                try queue.markSent(delivered)
                try queue.release(claimed[(index + 1)...].map(\.id))
                return false
            }
        }
        try queue.markSent(delivered)
        return true
    }

    private func send(_ message: MailQueue.Claimed, with client: SMTPClient) -> SMTPOutcome {
        // Rows may come from an external writer: nothing that could inject a header or a
        // second recipient reaches SMTP.
        guard EmailAddress.isPlausibleMailbox(message.recipient) else {
            return .rejected("the recipient is not one plausible mailbox")
        }
        return client.send(MailMessage(from: settings.from, to: message.recipient, subject: message.subject,
                                       body: message.body, date: message.createdAt, messageID: message.messageID))
    }

    private func recordFailure(_ outcome: SMTPOutcome, of message: MailQueue.Claimed) throws {
        let metadata: Logger.Metadata = ["outbox.id": "\(message.id)", "attempt": "\(message.attempts)"]
        switch outcome {
        case .delivered:
            return
        case .rejected(let reason):
            try queue.markFailed(message.id, error: reason)
            counters.withLock { $0.failed += 1; $0.lastTryFailed = true }
            logger.warning("the relay refused a message; it will not be retried",
                           metadata: metadata.merging(["error": "\(reason)"]) { $1 })
        case .retry(let reason):
            let failed = try queue.scheduleRetry(message, error: reason)
            counters.withLock { counters in
                counters.lastTryFailed = true
                if failed { counters.failed += 1 }
            }
            logger.warning(failed ? "a message could not be delivered within 15 minutes; it failed"
                                  : "a message could not be delivered; it will be retried",
                           metadata: metadata.merging(["error": "\(reason)"]) { $1 })
        }
    }
}
