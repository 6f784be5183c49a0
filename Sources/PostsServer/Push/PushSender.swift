import Foundation
import Logging
import Postgres
import Synchronization

/// Posts new notifications to `PUSH_WEBHOOK_URL`, on a thread of its own (never an event
/// loop, never a request's worker). Each round claims a few due pushes and commits
/// (`PushQueue.claim`), posts them with no database connection held, then records each
/// outcome. Rounds run every second: notifications are written by triggers on many paths
/// (likes, comments, follows, posts, the dev seed), so the poll rather than a nudge from
/// each is what finds them; it also picks up other instances' rows and retries that came due.
///
/// It has a database connection of its own (a pool of one): the request pool has exactly
/// one connection per worker, so a sender borrowing from it would make a request wait.
final class PushSender: Sendable {
    private let settings: PushSettings
    private let pool: ConnectionPool
    private let queue: PushQueue
    private let logger: Logger
    private let rounds: RoundsThread
    private let counters = Mutex(Counters())

    /// Pushes claimed at once: few, so that a slow receiver (10 s a request at most) cannot
    /// outlast the lease.
    static let batch = 8
    /// How often an idle sender looks for due pushes.
    static let pollInterval: Duration = .seconds(1)
    /// How often it fails never-tried pushes past the window and purges old failures.
    static let expiryCheckInterval: Duration = .seconds(30)

    struct Counters: Sendable {
        var sent = 0
        var failed = 0
    }

    init(settings: PushSettings, conninfo: String, logger: Logger) {
        self.settings = settings
        pool = ConnectionPool(ConnectionPool.Configuration(conninfo: conninfo, size: 1))
        queue = PushQueue(pool: pool)
        self.logger = logger
        rounds = RoundsThread(name: "push-sender", pollInterval: Self.pollInterval, upkeepInterval: Self.expiryCheckInterval,
                              logger: logger, log: RoundsThread.Log(
                                  cannotStart: "the push sender cannot start; pushes wait in push_outbox",
                                  unreachable: "the push sender cannot reach push_outbox; trying again",
                                  reachable: "the push sender reaches the database again"))
    }

    var statistics: Counters { counters.withLock { $0 } }

    func start() {
        logger.info("push sender started", metadata: ["url": "\(settings)"])
        rounds.start(makeWorker: { [self] in try PushWebhookClient(settings: settings, cancellation: rounds.cancellation) },
                     upkeep: { [self] in
            let expired = try queue.expireAndPurge()
            if expired > 0 { counters.withLock { $0.failed += expired } }
        }, round: { [self] client in
            let claimed = try queue.claim(limit: Self.batch)
            return try deliver(claimed, with: client) && claimed.count == Self.batch
        })
    }

    /// Ends a request in progress within about a second (its push is retried later, here
    /// or on another instance), waits for the thread and closes its connection.
    func stop() {
        if rounds.stop() { pool.close() }
    }

    /// Posts the claimed pushes in order; false when it stopped early (the receiver failed
    /// one, or the sender is stopping), the rest being given back untried. The batch's
    /// deliveries are deleted together, in one statement at its end.
    private func deliver(_ claimed: [PushQueue.Claimed], with client: PushWebhookClient) throws -> Bool {
        var delivered: [Int64] = []
        for (index, push) in claimed.enumerated() {
            guard rounds.isRunning else {
                try queue.markDelivered(delivered)
                try queue.release(claimed[index...].map(\.id))
                return false
            }
            switch client.post(push.payload.body, deliveryID: push.deliveryID) {
            case .delivered:
                delivered.append(push.id)
                counters.withLock { $0.sent += 1 }
            case .retry(let reason):
                try recordFailure(of: push, reason: reason)
                // The receiver is likely down for the others too: they go back untried, and
                // the next rounds try one at a time while this one backs off.
                try queue.markDelivered(delivered)
                try queue.release(claimed[(index + 1)...].map(\.id))
                return false
            }
        }
        try queue.markDelivered(delivered)
        return true
    }

    private func recordFailure(of push: PushQueue.Claimed, reason: String) throws {
        let failed = try queue.scheduleRetry(push, error: reason)
        if failed { counters.withLock { $0.failed += 1 } }
        logger.warning(failed ? "a push could not be delivered within an hour; it failed"
                              : "a push could not be delivered; it will be retried",
                       metadata: ["push.id": "\(push.id)", "delivery": "\(push.deliveryID)",
                                  "attempt": "\(push.attempts)", "error": "\(reason)"])
    }
}
