import Foundation
import Logging
import Postgres
import Synchronization

/// Removes changes older than `CHANGES_RETENTION`, in the background, once every interval,
/// one instance at a time (a transaction-scoped advisory try-lock: whoever holds it prunes,
/// the others skip this round). The highest key removed is kept, so that a cursor from
/// before it is told 410 rather than silently missing changes.
///
/// Each round then runs the `UpkeepPruner` (codes, mail, tokens, idempotency keys,
/// notifications, push tokens, the feeds' depth): one background thread for all the
/// pruning an instance does. Ages are the `ServerClock`'s: what an advance of it puts past
/// its retention goes in the next round (a test calls `pruneOnce` rather than wait for it).
final class ChangePruner: Sendable {
    private let pool: ConnectionPool
    let upkeep: UpkeepPruner
    private let clock: ServerClock
    private let retention: Duration
    private let interval: Duration
    private let logger: Logger
    private let running = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// In the two-int space of advisory locks (posts and profiles use the bigint one):
    /// "prun", "chg" in ASCII.
    private static let lockKey: (Int32, Int32) = (0x7072_756E, 0x0063_6867)
    /// Changes removed per transaction: short ones, since a transaction that runs long
    /// holds back every instance's delivery (see `ChangeLog`).
    private static let batch = 5000

    init(pool: ConnectionPool, retention: Duration, tokenLifetime: Duration = .seconds(90 * 24 * 3600),
         notificationsRetention: Duration = .seconds(90 * 24 * 3600), pushTokenRetention: Duration = .seconds(270 * 24 * 3600),
         interval: Duration = .seconds(30), clock: ServerClock, logger: Logger) {
        self.pool = pool
        self.clock = clock
        upkeep = UpkeepPruner(pool: pool, tokenLifetimeSeconds: tokenLifetime.components.seconds,
                              notificationsRetentionSeconds: notificationsRetention.components.seconds,
                              pushTokenRetentionSeconds: pushTokenRetention.components.seconds, clock: clock)
        self.retention = retention
        self.interval = interval
        self.logger = logger
    }

    func start() {
        running.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            while running.load(ordering: .acquiring) {
                do {
                    try pruneOnce()
                } catch {
                    logger.warning("pruning changes failed; trying again later", metadata: ["error": "\(error)"])
                }
                do {
                    try upkeep.pruneOnce()
                } catch {
                    logger.warning("pruning codes, mail, tokens, notifications or feeds failed; trying again later",
                                   metadata: ["error": "\(error)"])
                }
                _ = wake.wait(timeout: .now() + .milliseconds(Int(interval.components.seconds * 1000)))
            }
            finished.signal()
        }
        thread.name = "change-pruner"
        thread.start()
    }

    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        _ = finished.wait(timeout: .now() + 5)
    }

    /// Returns how many changes it removed (0 when another instance holds the turn).
    /// Oldest key first, in short batches, each with its own turn: no index on `at` to
    /// keep up on every write, and `at` follows key order closely enough (a change that
    /// is out of step is kept a little longer, never removed early).
    @discardableResult
    func pruneOnce() throws -> Int {
        let seconds = Double(retention.components.seconds) + Double(retention.components.attoseconds) / 1e18
        var total = 0
        while true {
            let removed = try pool.withTransaction { connection -> Int? in
                let turn: Bool = try connection.query(
                    "SELECT pg_try_advisory_xact_lock(\(Self.lockKey.0), \(Self.lockKey.1)) AS turn").firstRow().decode("turn")
                guard turn else { return nil }
                return try connection.query("""
                    WITH oldest AS (
                        SELECT txid, position FROM changes ORDER BY txid, position LIMIT \(Self.batch)
                    ), gone AS (
                        DELETE FROM changes c USING oldest o
                        WHERE c.txid = o.txid AND c.position = o.position AND c.at < \(clock.now) - make_interval(secs => \(seconds))
                        RETURNING c.txid, c.position
                    ), highest AS (
                        SELECT txid, position FROM gone ORDER BY txid DESC, position DESC LIMIT 1
                    ), kept AS (
                        INSERT INTO changes_pruned (txid, position) SELECT txid, position FROM highest
                        ON CONFLICT (singleton) DO UPDATE SET txid = excluded.txid, position = excluded.position
                        WHERE (changes_pruned.txid, changes_pruned.position) < (excluded.txid, excluded.position)
                    )
                    SELECT count(*) AS removed FROM gone
                    """).firstRow().decode("removed")
            }
            guard let removed, removed > 0 else { break }
            total += removed
        }
        return total
    }
}
