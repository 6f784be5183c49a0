import Postgres

/// The recurring kinds' jobs (`JobKind.everySeconds`, migration 0024): one row per kind for
/// all instances, never deleted while the kind runs: a run that succeeded queues it again a
/// period later (`record`), a failed one after its backoff, and a runner that died leaves it
/// to be claimed again when its lease ends, like any job. Why one row rather than a timer on
/// each instance: N instances then run the work once a period between them, not N times,
/// and the place a run stopped can be kept in the job for whichever instance runs next.
extension JobQueue {
    /// Makes sure each recurring kind of `kinds` has its one job, and that the job is not
    /// stranded in a future the clock has left. Every runner calls it on each of its upkeep
    /// rounds, so that a job removed behind the queue's back (a dev reset empties the table)
    /// is back within seconds; and once as it starts with `dueNow`, which makes a queued job
    /// due at once: a starting instance runs a round at once, as each instance's timer did
    /// (what piled up while none ran, or what an operator aged by hand, goes without waiting
    /// out a period).
    func keepRecurring(_ kinds: [JobKind], dueNow: Bool = false) throws {
        let kinds = kinds.filter(\.recurs)
        guard !kinds.isEmpty else { return }
        let names = PostgresArray(kinds.map(\.name))
        // The farthest off a job of the kind is ever due by its own rules: a period, a lease,
        // a backoff. Further than that, the clock was set back since it was scheduled (the
        // dev clock, returned to real time after an advance of weeks): due now, not when the
        // clock comes round to it again.
        let farthest = PostgresArray(kinds.map { Int64(max($0.everySeconds ?? 0, $0.leaseSeconds, $0.maxBackoffSeconds)) })
        let stranded: SQLQuery = "j.run_at > \(clock.now) + make_interval(secs => k.farthest::float8)"
        let pulled: SQLQuery = dueNow ? "(j.state = 'queued' OR \(stranded))" : stranded
        try pool.withRetriedStatement { connection in
            try connection.query("""
                UPDATE jobs j SET run_at = \(clock.now)
                FROM unnest(\(names), \(farthest)) AS k(kind, farthest)
                WHERE j.kind = k.kind AND j.recurring AND j.state <> 'dead'
                  AND \(pulled)
                """)
        }
        // Missing: queued, due at once. Instances that find it missing at the same moment
        // insert one between them: the unique index lets one row of a kind be pending.
        try pool.withRetriedStatement { connection in
            try connection.query("""
                INSERT INTO jobs (kind, payload, recurring, run_at, created_at)
                SELECT k.kind, '{}'::json, true, \(clock.now), \(clock.now) FROM unnest(\(names)) AS k(kind)
                ON CONFLICT (kind) WHERE recurring AND state <> 'dead' DO NOTHING
                """)
        }
    }
}

/// A recurring kind's handler: one round of its work per try. The round is handed its job,
/// whose payload may say where the last round stopped (and which the round may move on, as
/// long as the job is still its own: `id` and `attempts` as claimed).
final class RecurringRound: JobHandler {
    let round: @Sendable (ClaimedJob, JobContext) throws -> Void

    init(_ round: @escaping @Sendable (ClaimedJob, JobContext) throws -> Void) {
        self.round = round
    }

    /// A round that throws is tried again after the kind's backoff (the database was away);
    /// one claimed as the runner stops goes back at once, for another instance.
    func perform(_ jobs: [ClaimedJob], context: JobContext) throws -> [JobOutcome] {
        context.tryEach(jobs) { job in
            guard context.isRunning() else { return .untried }
            try round(job, context)
            return .done
        }
    }
}

extension JobWorker {
    /// The worker of a recurring kind whose try is one `round`.
    static func recurring(_ kind: JobKind, round: @escaping @Sendable (ClaimedJob, JobContext) throws -> Void) -> JobWorker {
        precondition(kind.recurs, "\(kind) has no period")
        return JobWorker(kind: kind, makeHandler: { _ in RecurringRound(round) })
    }
}
