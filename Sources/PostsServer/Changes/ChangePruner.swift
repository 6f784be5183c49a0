import Foundation
import Logging
import Postgres
import Synchronization

/// Removes changes older than `CHANGES_RETENTION`, in the background, once every interval,
/// one instance at a time (a transaction-scoped advisory try-lock: whoever holds it prunes,
/// the others skip this round). The highest key removed is kept, so that a cursor from
/// before it is told 410 rather than silently missing changes.
final class ChangePruner: Sendable {
    private let pool: ConnectionPool
    private let retention: Duration
    private let interval: Duration
    private let logger: Logger
    private let running = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Any constant works; this one is "prune" in ASCII.
    private static let lockKey: Int64 = 0x70_7275_6E65

    init(pool: ConnectionPool, retention: Duration, interval: Duration = .seconds(30), logger: Logger) {
        self.pool = pool
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
    @discardableResult
    func pruneOnce() throws -> Int {
        let seconds = Double(retention.components.seconds) + Double(retention.components.attoseconds) / 1e18
        return try pool.withTransaction { connection -> Int in
            let turn: Bool = try connection.query("SELECT pg_try_advisory_xact_lock(\(Self.lockKey)) AS turn").first!.decode("turn")
            guard turn else { return 0 }
            return try connection.query("""
                WITH gone AS (
                    DELETE FROM changes WHERE at < now() - make_interval(secs => \(seconds)) RETURNING txid, position
                ), highest AS (
                    SELECT txid, position FROM gone ORDER BY txid DESC, position DESC LIMIT 1
                ), kept AS (
                    INSERT INTO changes_pruned (txid, position) SELECT txid, position FROM highest
                    ON CONFLICT (singleton) DO UPDATE SET txid = excluded.txid, position = excluded.position
                    WHERE (changes_pruned.txid, changes_pruned.position) < (excluded.txid, excluded.position)
                )
                SELECT count(*) AS removed FROM gone
                """).first!.decode("removed")
        }
    }
}
