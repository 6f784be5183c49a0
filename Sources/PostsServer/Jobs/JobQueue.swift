import Postgres

/// The one durable queue of background work, in the `jobs` table (migration 0017), after
/// Oban and River: a job is inserted by the write that causes it, in the same transaction
/// (it exists exactly when its cause committed); runners on any instance claim due jobs
/// with FOR UPDATE SKIP LOCKED and a lease (one round trip, committed before the work
/// starts, so no row lock or connection is held while it runs); each try's outcome is
/// recorded after it. Delivery is at least once: a runner that dies mid-try leaves its
/// jobs to be claimed again when the lease ends, so handlers are idempotent (a push keeps
/// its delivery id, a mail its Message-ID, a deletion of what is gone is done).
///
/// Times are the `ServerClock`'s, so that instances agree and tests can advance them.
struct JobQueue: Sendable {
    let pool: ConnectionPool
    let clock: ServerClock

    /// Queues one job of `kind` per payload (JSON objects), in order, in the caller's
    /// transaction.
    static func enqueue(_ kind: JobKind, payloads: [JSONObject], clock: ServerClock, on connection: PostgresConnection) throws {
        guard !payloads.isEmpty else { return }
        let texts = payloads.map { String(decoding: $0.finished, as: UTF8.self) }
        try connection.query("""
            INSERT INTO jobs (kind, payload, run_at, created_at)
            SELECT \(kind.name), p.payload::json, \(clock.now), \(clock.now)
            FROM unnest(\(PostgresArray(texts))) WITH ORDINALITY AS p(payload, n) ORDER BY p.n
            """)
    }

    /// Up to a batch of the kind's due jobs, oldest due first, each marked as being tried
    /// (one more attempt, a lease). Jobs another runner holds are skipped, never waited for.
    func claim(_ kind: JobKind) throws -> [ClaimedJob] {
        try pool.withConnection { connection in
            try connection.query("""
                WITH due AS (
                    SELECT id FROM jobs WHERE kind = \(kind.name) AND state <> 'dead' AND run_at <= \(clock.now)
                    ORDER BY run_at, id LIMIT \(literal: kind.batch) FOR UPDATE SKIP LOCKED
                )
                UPDATE jobs j SET state = 'running', attempts = j.attempts + 1,
                    run_at = \(clock.now) + make_interval(secs => \(literal: kind.leaseSeconds))
                FROM due WHERE j.id = due.id
                RETURNING j.id, j.payload::text AS payload, j.attempts
                """).rows.map { row in
                ClaimedJob(id: try row.decode("id"), payload: try row.decode("payload"), attempts: try row.decode("attempts"))
            }.sorted { $0.id < $1.id }
        }
    }

    /// Records a batch's outcomes in one statement: done jobs go (a recurring kind's is due
    /// again one period later, queued anew), untried ones are due again at once, failed ones
    /// wait their backoff (never past the window's end) or die. Returns the payloads of
    /// those that died.
    @discardableResult
    func record(_ outcomes: [(job: ClaimedJob, outcome: JobOutcome)], of kind: JobKind) throws -> [String] {
        guard !outcomes.isEmpty else { return [] }
        var ids: [Int64] = [], attempts: [Int64] = [], verdicts: [String] = [], errors: [String] = [], delays: [Int64] = []
        for (job, outcome) in outcomes {
            ids.append(job.id)
            attempts.append(Int64(job.attempts))
            switch outcome {
            case .done, .skipped: verdicts.append(kind.recurs ? "again" : "done"); errors.append("")
            case .untried: verdicts.append("untried"); errors.append("")
            case .retry(let error, _): verdicts.append("retry"); errors.append(String(error.prefix(500)))
            case .dead(let error): verdicts.append("dead"); errors.append(String(error.prefix(500)))
            }
            // After a success a recurring kind's next run is a period away; after a failure
            // every kind waits its backoff.
            let succeeded = outcome == .done || outcome == .skipped
            if case .retry(_, let after?) = outcome {
                delays.append(Int64(max(after, 0)))
            } else {
                delays.append(Int64(succeeded ? kind.everySeconds ?? 0 : kind.backoffSeconds(afterAttempt: job.attempts)))
            }
        }
        // A kind without a window keeps trying: its window's end is never reached.
        let window: SQLQuery = kind.windowSeconds.map { "j.created_at + make_interval(secs => \(literal: $0))" }
            ?? "'infinity'::timestamptz"
        return try pool.withRetriedStatement { connection in
            try connection.query("""
                WITH o AS (
                    -- Only the tries this runner still holds: a job whose lease ended and that
                    -- another runner claimed since (one more attempt) is that runner's now.
                    SELECT o.* FROM unnest(\(PostgresArray(ids)), \(PostgresArray(attempts)), \(PostgresArray(verdicts)),
                                           \(PostgresArray(errors)), \(PostgresArray(delays))) AS o(id, attempts, verdict, error, delay)
                    JOIN jobs j ON j.id = o.id AND j.attempts = o.attempts
                ), done AS (
                    DELETE FROM jobs j USING o WHERE j.id = o.id AND o.verdict = 'done'
                ), again AS (
                    -- Queued anew: its age (jobs_oldest_seconds) counts from now. Its attempts
                    -- go on counting, so that a runner whose lease ended never matches again.
                    UPDATE jobs j SET state = 'queued', run_at = \(clock.now) + make_interval(secs => o.delay::float8),
                        created_at = \(clock.now), last_error = NULL
                    FROM o WHERE j.id = o.id AND o.verdict = 'again'
                ), untried AS (
                    UPDATE jobs j SET state = 'queued', attempts = greatest(j.attempts - 1, 0), run_at = \(clock.now)
                    FROM o WHERE j.id = o.id AND o.verdict = 'untried'
                ), failed AS (
                    UPDATE jobs j SET last_error = o.error,
                        state = CASE WHEN o.verdict = 'dead' OR \(window) <= \(clock.now) THEN 'dead' ELSE 'queued' END,
                        finished_at = CASE WHEN o.verdict = 'dead' OR \(window) <= \(clock.now) THEN \(clock.now) END,
                        run_at = least(\(clock.now) + make_interval(secs => o.delay::float8), \(window))
                    FROM o WHERE j.id = o.id AND o.verdict IN ('retry', 'dead')
                    RETURNING j.state, j.payload::text AS payload
                )
                SELECT payload FROM failed WHERE state = 'dead'
                """).rows.map { try $0.decode("payload", as: String.self) }
        }
    }

    /// Kills the kind's jobs that no runner tried within the window (a backlog from while
    /// none ran: news hours late is noise, a sign-in code long dead), and those left
    /// waiting (or claimed by a runner that died), untried again, a lease past its end.
    /// Returns their payloads.
    func expire(_ kind: JobKind) throws -> [String] {
        guard let window = kind.windowSeconds else { return [] }
        return try pool.withRetriedStatement { connection in
            try connection.query("""
                WITH stale AS (
                    SELECT id FROM jobs
                    WHERE kind = \(kind.name) AND state <> 'dead'
                      AND created_at + make_interval(secs => \(literal: window)) <= \(clock.now)
                      AND (attempts = 0 OR run_at + make_interval(secs => \(literal: kind.leaseSeconds)) <= \(clock.now))
                    ORDER BY run_at, id LIMIT 1000 FOR UPDATE SKIP LOCKED
                )
                UPDATE jobs j SET state = 'dead', finished_at = \(clock.now),
                    last_error = CASE WHEN j.attempts = 0 THEN 'not tried within the delivery window'
                                      ELSE 'not tried again within the delivery window' END
                FROM stale WHERE j.id = stale.id
                RETURNING j.payload::text AS payload
                """).rows.map { try $0.decode("payload", as: String.self) }
        }
    }

    /// Jobs of `kinds` on every instance that are due (waiting, or a lease that has ended) and
    /// that a runner is trying (a lease still running): what `JobRunner.drain` waits out.
    func unfinished(_ kinds: [JobKind]) throws -> (due: Int, running: Int) {
        let row = try pool.withConnection { connection in
            try connection.query("""
                SELECT count(*) FILTER (WHERE run_at <= \(clock.now)) AS due,
                       count(*) FILTER (WHERE state = 'running' AND run_at > \(clock.now)) AS running
                FROM jobs WHERE kind = ANY(\(PostgresArray(kinds.map(\.name)))) AND state <> 'dead'
                """).firstRow()
        }
        return (try row.decode("due"), try row.decode("running"))
    }

    struct Depth: Sendable, Equatable {
        /// Jobs still to run (waiting or being tried).
        var pending = 0
        /// Age of the oldest of them, in seconds.
        var oldestSeconds = 0.0
        /// Jobs given up on and kept for the operator.
        var dead = 0
    }

    /// Every kind's depth, on every instance together.
    func depths() throws -> [String: Depth] {
        try pool.withConnection { connection in
            var depths: [String: Depth] = [:]
            for row in try connection.query("""
                SELECT kind, count(*) FILTER (WHERE state <> 'dead') AS pending,
                       coalesce(extract(epoch FROM \(clock.now) - min(created_at) FILTER (WHERE state <> 'dead')), 0)::float8 AS oldest,
                       count(*) FILTER (WHERE state = 'dead') AS dead
                FROM jobs GROUP BY kind
                """).rows {
                depths[try row.decode("kind")] = Depth(pending: try row.decode("pending"), oldestSeconds: try row.decode("oldest"),
                                                       dead: try row.decode("dead"))
            }
            return depths
        }
    }
}
