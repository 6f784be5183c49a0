import Logging
import Postgres

/// A job as its runner claimed it: one try, counted already.
struct ClaimedJob: Sendable {
    let id: Int64
    /// The kind's arguments as queued (a JSON object); handlers usually read them in SQL,
    /// joined to the rows they name, in the query that loads what the try needs.
    let payload: String
    /// Tries so far, this one included.
    let attempts: Int
}

/// What became of one try.
enum JobOutcome: Sendable, Equatable {
    /// Done: the job is deleted.
    case done
    /// Nothing left to do (what it was for is gone, or may no longer be done): the job is
    /// deleted, and counted apart from the work actually done.
    case skipped
    /// Worth another try after the kind's backoff, or after `after` seconds when the far
    /// side said how long to wait (`Retry-After`); never past the kind's window.
    case retry(String, after: Int? = nil)
    /// No try can mend it (a mail relay's 5xx): the job dies at once.
    case dead(String)
    /// Not tried after all (the runner is stopping, or an earlier job of the batch found
    /// the far side down): due again at once, the try not counted.
    case untried
}

/// Does one kind's work. A runner makes one handler per concurrent batch of its kind and
/// uses it from one thread at a time, so a handler may keep a connection to its far side
/// (an SMTP relay, a webhook) open between batches.
protocol JobHandler: AnyObject {
    /// Tries the claimed jobs in order and says what became of each (one outcome per job,
    /// in the same order). Blocking work happens here, on a job thread, and must not hold a
    /// database connection while it waits: borrow one from `context.pool` only to read
    /// what a try needs or record what it did.
    func perform(_ jobs: [ClaimedJob], context: JobContext) throws -> [JobOutcome]
}

/// What a handler may use while it runs.
struct JobContext: Sendable {
    /// The job system's own connections (never the requests' pool).
    let pool: ConnectionPool
    let clock: ServerClock
    let logger: Logger
    /// False once the runner is stopping: a handler gives back what it has not started.
    let isRunning: @Sendable () -> Bool
    /// Looks for due jobs now: a handler that queued jobs of another kind calls it after
    /// its commit.
    let wake: @Sendable () -> Void

    /// Tries each job on its own, for work that only touches the database (a fan-out, a
    /// purge): one job's failure says nothing of the next, so each that throws is retried
    /// after its backoff and the rest go on.
    func tryEach(_ jobs: [ClaimedJob], _ attempt: (ClaimedJob) throws -> JobOutcome) -> [JobOutcome] {
        jobs.map { job in
            do {
                return try attempt(job)
            } catch {
                return .retry("\(error)")
            }
        }
    }

    /// Tries the jobs in order. Once one fails and wants a retry (the far side is likely
    /// down for the others too), or the runner is stopping, the rest go back untried: the
    /// next batches try one at a time while that one backs off.
    func tryInOrder(_ jobs: [ClaimedJob], _ attempt: (ClaimedJob) -> JobOutcome) -> [JobOutcome] {
        var outcomes: [JobOutcome] = []
        var farSideDown = false
        for job in jobs {
            guard !farSideDown, isRunning() else {
                outcomes.append(.untried)
                continue
            }
            let outcome = attempt(job)
            if case .retry = outcome { farSideDown = true }
            outcomes.append(outcome)
        }
        return outcomes
    }
}

/// One kind's place in a runner: its rules, how to make a handler for it (given what ends
/// its transfers when the runner stops), and what to do besides.
struct JobWorker: Sendable {
    let kind: JobKind
    let makeHandler: @Sendable (CurlTransfer.Cancellation) throws -> any JobHandler
    /// Jobs of this kind that died here (their window passed, or a try said no retry can
    /// mend them), with their payloads: to mark what they were for as failed.
    var died: (@Sendable ([String], JobContext) throws -> Void)?
    /// Runs on the runner's upkeep (every few seconds): a health probe, say.
    var upkeep: (@Sendable (JobContext) throws -> Void)?
}
