import Logging
import Postgres

/// Deletes the stored images that migration 0016's triggers queued in `storage_deletions`,
/// on a thread of its own (`RoundsThread`) with a database connection of its own. A round
/// claims due rows (SKIP LOCKED and a lease: N instances share the queue), deletes each
/// image and its sizes unless a post or profile still names its URL, and forgets the row;
/// while the store is down it keeps the rows and tries again with backoff, so nothing is
/// left behind once the store is back. While the store is failing, every round first asks
/// it whether it is back, so `/api/health` recovers without traffic.
final class StorageDeletions: Sendable {
    private let store: any ObjectStore
    private let metrics: StorageMetrics
    private let pool: ConnectionPool
    private let logger: Logger
    private let rounds: RoundsThread

    static let batch = 20
    static let pollInterval: Duration = .seconds(2)
    /// A claimed row is another instance's to take again after this long (its worker died).
    static let leaseSeconds = 120
    /// Backoff while the store fails: 2, 4, 8 … seconds, at most this.
    static let maxBackoffSeconds = 300

    init(store: any ObjectStore, metrics: StorageMetrics, conninfo: String, logger: Logger) {
        self.store = store
        self.metrics = metrics
        pool = ConnectionPool(ConnectionPool.Configuration(conninfo: conninfo, size: 1))
        self.logger = logger
        rounds = RoundsThread(name: "storage-deletions", pollInterval: Self.pollInterval, upkeepInterval: Self.pollInterval,
                              logger: logger, log: RoundsThread.Log(
                                  cannotStart: "the storage deletion worker cannot start; deletions wait in storage_deletions",
                                  unreachable: "the storage deletion worker cannot reach storage_deletions; trying again",
                                  reachable: "the storage deletion worker reaches the database again"))
    }

    func start() {
        rounds.start(makeWorker: {}, upkeep: { [self] in
            guard metrics.isFailing else { return }
            // Still down: the state stays failing and the queue waits. Back: the metrics log it.
            try? store.probe()
        }, round: { [self] _ in try round() })
    }

    func stop() {
        if rounds.stop() { pool.close() }
    }

    /// A deletion is due now (a commit dropped an image): sooner than the next poll.
    func wake() {
        rounds.wake()
    }

    /// Queues `url` from outside a transaction: an object written for a transaction that
    /// then failed, which could not be deleted at once.
    func enqueue(_ url: String) throws {
        try pool.withConnection { try $0.query("INSERT INTO storage_deletions (url) VALUES (\(url))") }
        rounds.wake()
    }

    private struct Claimed {
        let id: Int64
        let url: String
        let attempts: Int
        let referenced: Bool
    }

    /// One batch; true when it was full (more may be due).
    private func round() throws -> Bool {
        let claimed = try claim()
        var done: [Int64] = []
        defer { if !done.isEmpty { try? finish(done) } }
        for row in claimed {
            guard !row.referenced, let name = StoredImageName(url: row.url) else {
                done.append(row.id)
                continue
            }
            do {
                try store.delete(name.allNames)
                done.append(row.id)
            } catch {
                // The store is down: this row backs off, the rest of the batch goes back as it was.
                try retryLater(row, error: error)
                try release(claimed.map(\.id).filter { id in id != row.id && !done.contains(id) })
                return false
            }
        }
        return claimed.count == Self.batch
    }

    private func claim() throws -> [Claimed] {
        try pool.withConnection { connection in
            try connection.query("""
                WITH due AS (
                    SELECT id FROM storage_deletions WHERE next_attempt_at <= now()
                    ORDER BY next_attempt_at, id LIMIT \(literal: Self.batch) FOR UPDATE SKIP LOCKED
                )
                UPDATE storage_deletions d SET attempts = d.attempts + 1,
                    next_attempt_at = now() + make_interval(secs => \(literal: Self.leaseSeconds))
                FROM due WHERE d.id = due.id
                RETURNING d.id, d.url, d.attempts,
                    EXISTS (SELECT 1 FROM posts WHERE image_url = d.url)
                        OR EXISTS (SELECT 1 FROM profiles WHERE avatar_url = d.url) AS referenced
                """).rows.map { row in
                Claimed(id: try row.decode("id", as: Int64.self), url: try row.decode("url", as: String.self),
                        attempts: Int(try row.decode("attempts", as: Int32.self)),
                        referenced: try row.decode("referenced", as: Bool.self))
            }
        }
    }

    private func finish(_ ids: [Int64]) throws {
        try pool.withConnection { try $0.query("DELETE FROM storage_deletions WHERE id = ANY(\(PostgresArray(ids)))") }
    }

    private func release(_ ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try pool.withConnection { connection in
            try connection.query("""
                UPDATE storage_deletions SET attempts = attempts - 1, next_attempt_at = now() WHERE id = ANY(\(PostgresArray(ids)))
                """)
        }
    }

    private func retryLater(_ row: Claimed, error: any Error) throws {
        let backoff = min(1 << min(row.attempts, 16), Self.maxBackoffSeconds)
        logger.warning("a stored image could not be deleted; it will be tried again",
                       metadata: ["url": "\(row.url)", "attempt": "\(row.attempts)", "error": "\(error)"])
        try pool.withConnection { connection in
            try connection.query("""
                UPDATE storage_deletions SET next_attempt_at = now() + make_interval(secs => \(literal: backoff)),
                    last_error = \("\(error)") WHERE id = \(row.id)
                """)
        }
    }
}
