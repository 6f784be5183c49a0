import Postgres

/// Removes changes older than `CHANGES_RETENTION`: one round each time the recurring job
/// `changes.prune` runs (`JobKind.changesPrune`: every 30 s, on whichever instance claims
/// it). The highest key removed is kept, so that a cursor from before it is told 410 rather
/// than silently missing changes. Ages are the `ServerClock`'s: what an advance of it puts
/// past its retention goes in the next round, which the advance makes due at once (a test
/// may also call `pruneOnce` itself, holding the kind so that no job's round races it).
struct ChangePruner: Sendable {
    let pool: ConnectionPool
    let retention: Duration
    let clock: ServerClock

    /// In the two-int space of advisory locks (posts and profiles use the bigint one):
    /// "prun", "chg" in ASCII. The job runs on one instance at a time already; the turn
    /// keeps a round whose lease ended (or a test's) from racing the next for the same rows.
    private static let lockKey: (Int32, Int32) = (0x7072_756E, 0x0063_6867)
    /// Changes removed per transaction: short ones, since a transaction that runs long
    /// holds back every instance's delivery (see `ChangeLog`).
    private static let batch = 5000

    /// The worker of `changes.prune`: each try is a round, on the job runner's own
    /// connections (a long backlog never takes one from a request).
    var worker: JobWorker {
        .recurring(.changesPrune) { [retention] _, context in
            _ = try ChangePruner(pool: context.pool, retention: retention, clock: context.clock).pruneOnce()
        }
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
