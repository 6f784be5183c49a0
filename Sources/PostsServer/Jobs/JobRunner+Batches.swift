import Foundation
import Logging

/// The job threads' side of `JobRunner`: each takes a claimed batch, runs it with an idle
/// handler of its kind (or a new one), and records what came of each job.
extension JobRunner {
    /// A job thread: runs the batches the dispatcher hands out until the runner stops.
    func runBatches() {
        while true {
            work.wait()
            guard isRunning, let batch = state.withLock({ $0.pending.isEmpty ? nil : $0.pending.removeFirst() }) else {
                if !isRunning { return }
                continue
            }
            let healthy = run(batch)
            state.withLock { $0.inFlight[batch.worker.kind.name, default: 1] -= 1 }
            settle()
            // More may be due for a kind that worked: look at once. One whose far side
            // failed, or that gave jobs back, waits for the next poll rather than spin.
            if healthy { wakeUp.signal() }
        }
    }

    /// Runs a batch and records its outcomes; true when every job of it is done.
    private func run(_ batch: Batch) -> Bool {
        let kind = batch.worker.kind
        var outcomes: [JobOutcome]
        if let handler = handler(for: batch.worker) {
            do {
                outcomes = try handler.perform(batch.jobs, context: context)
            } catch {
                // The handler could not read what it needed (the database went away): the
                // batch is tried again once the database is back.
                logger.warning("a batch of jobs could not run; it will be tried again",
                               metadata: ["kind": "\(kind)", "error": "\(error)"])
                outcomes = batch.jobs.map { _ in .untried }
            }
            let idle = IdleHandler(handler)
            state.withLock { $0.handlers[kind.name, default: []].append(idle) }
        } else {
            outcomes = batch.jobs.map { _ in .untried }
        }
        if outcomes.count != batch.jobs.count { outcomes = batch.jobs.map { _ in .untried } }
        statistics.record(outcomes, of: kind)
        for (job, outcome) in zip(batch.jobs, outcomes) { log(outcome, of: job, kind: kind) }
        do {
            let died = try queue.record(Array(zip(batch.jobs, outcomes)), of: kind)
            statistics.died(died.count, of: kind)
            if !died.isEmpty { try batch.worker.died?(died, context) }
        } catch {
            // The leases end and the jobs are tried again: at least once, never zero times.
            logger.warning("the outcome of a batch of jobs could not be recorded; its jobs will run again",
                           metadata: ["kind": "\(kind)", "error": "\(error)"])
            return false
        }
        return outcomes.allSatisfy { $0 == .done || $0 == .skipped }
    }

    /// An idle handler of the batch's kind, or a new one; nil (and the kind given up on
    /// this instance) when none can be made.
    private func handler(for worker: JobWorker) -> (any JobHandler)? {
        let name = worker.kind.name
        if let idle = state.withLock({ $0.handlers[name]?.popLast() }) { return idle.handler }
        do {
            return try worker.makeHandler(cancellation)
        } catch {
            logger.error("a kind of job cannot run on this instance; its jobs wait for another",
                         metadata: ["kind": "\(worker.kind)", "error": "\(error)"])
            state.withLock { _ = $0.broken.insert(name) }
            return nil
        }
    }

    private func log(_ outcome: JobOutcome, of job: ClaimedJob, kind: JobKind) {
        let metadata: Logger.Metadata = ["kind": "\(kind)", "job.id": "\(job.id)", "attempt": "\(job.attempts)"]
        switch outcome {
        case .done, .skipped, .untried:
            return
        case .retry(let reason, _):
            logger.warning("a job failed; it will be tried again unless its window has passed",
                           metadata: metadata.merging(["error": "\(reason)"]) { $1 })
        case .dead(let reason):
            logger.warning("a job failed and will not be tried again", metadata: metadata.merging(["error": "\(reason)"]) { $1 })
        }
    }
}
