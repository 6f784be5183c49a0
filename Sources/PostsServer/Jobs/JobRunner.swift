import Foundation
import Locking
import Logging
import Postgres
import Synchronization

/// Runs the job queue's work on this instance: one dispatcher thread claims due jobs, kind
/// by kind, and hands each batch to the pool of job threads (never an event loop, never a
/// request's worker), which run it and record what came of it. A kind runs at most
/// `concurrency` batches at once, so a slow relay holds up its own kind, never the others.
/// The runner has database connections of its own (a small pool): the request pool has
/// exactly one connection per request worker.
///
/// The dispatcher looks when a write on this instance queued something (`wake()`, after
/// its commit), when the clock is advanced, when a batch finishes, and otherwise every
/// `pollInterval` (other instances' jobs, retries come due); every `upkeepInterval` it
/// kills what waited past its window and runs the kinds' upkeep.
final class JobRunner: Sendable {
    private let workers: [JobWorker]
    private let pool: ConnectionPool
    let queue: JobQueue
    private let clock: ServerClock
    private let logger: Logger
    let statistics = JobStatistics()
    private let running = Atomic<Bool>(false)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let state = ParkingLock(State())
    private let work = DispatchSemaphore(value: 0)
    /// Set by `stop()`: a transfer in progress (libcurl's) ends within about a second.
    let cancellation = CurlTransfer.Cancellation()

    static let pollInterval: Duration = .seconds(1)
    static let upkeepInterval: Duration = .seconds(2)

    private struct Batch {
        let worker: JobWorker
        let jobs: [ClaimedJob]
    }

    /// A handler between batches. Handlers are not thread-safe (a libcurl handle): one is
    /// handed from job thread to job thread under the state's lock, and used by one at a time.
    private final class IdleHandler: @unchecked Sendable {
        let handler: any JobHandler
        init(_ handler: any JobHandler) { self.handler = handler }
    }

    private struct State {
        var inFlight: [String: Int] = [:]
        var pending: [Batch] = []
        /// Idle handlers by kind (made on first need, kept for the next batch).
        var handlers: [String: [IdleHandler]] = [:]
        /// Kinds whose handler could not be made: never claimed again on this instance.
        var broken: Set<String> = []
        /// Claims nothing while set (`pause()`).
        var paused = false
        var threads = 0
    }

    init(workers: [JobWorker], conninfo: String, clock: ServerClock, logger: Logger) {
        self.workers = workers
        pool = ConnectionPool(ConnectionPool.Configuration(conninfo: conninfo, size: 2))
        queue = JobQueue(pool: pool, clock: clock)
        self.clock = clock
        self.logger = logger
        clock.onAdvance { [weak self] in self?.wake() }
    }

    private var context: JobContext {
        JobContext(pool: pool, clock: clock, logger: logger, isRunning: { [self] in isRunning })
    }

    var isRunning: Bool { running.load(ordering: .acquiring) }

    /// The kinds this instance runs.
    var kinds: [JobKind] { workers.map(\.kind) }

    /// What writes use to queue this instance's kinds and wake it.
    var scheduler: JobScheduler {
        JobScheduler(enabled: Set(kinds), wake: { [weak self] in self?.wake() })
    }

    /// Something was queued (or came due): look now rather than at the next poll. Never blocks.
    func wake() {
        wakeUp.signal()
    }

    func start() {
        guard !workers.isEmpty else { return }
        running.store(true, ordering: .releasing)
        let threads = workers.reduce(0) { $0 + $1.kind.concurrency }
        state.withLock { $0.threads = threads }
        for index in 0..<threads {
            let thread = Thread { [self] in
                runBatches()
                finished.signal()
            }
            thread.name = "jobs-\(index + 1)"
            thread.start()
        }
        let dispatcher = Thread { [self] in
            dispatch()
            finished.signal()
        }
        dispatcher.name = "jobs-dispatcher"
        dispatcher.start()
    }

    /// Ends the rounds, cutting transfers in progress (their jobs are tried again later,
    /// here or on another instance), waits (5 s at most) for the threads and closes the pool.
    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        cancellation.flag.store(true, ordering: .relaxed)
        wakeUp.signal()
        let threads = state.withLock { $0.threads }
        for _ in 0..<threads { work.signal() }
        let deadline = DispatchTime.now() + 5
        for _ in 0...threads { _ = finished.wait(timeout: deadline) }
        // Batches claimed but never started go back at once, not at the end of their lease.
        for batch in state.withLock({ state in defer { state.pending = [] }; return state.pending }) {
            _ = try? queue.record(batch.jobs.map { ($0, .untried) }, of: batch.worker.kind)
        }
        pool.close()
    }

    /// Stops claiming jobs and waits (10 s at most) for the batches in flight to finish:
    /// from its return until `resume()`, no job of this instance is being tried. For a test
    /// that must change the world between a job's tries, and for an operator's pause.
    func pause() {
        state.withLock { $0.paused = true }
        let deadline = ContinuousClock.now + .seconds(10)
        while state.withLock({ $0.inFlight.values.reduce(0, +) > 0 || !$0.pending.isEmpty }), ContinuousClock.now < deadline {
            usleep(5_000)
        }
    }

    func resume() {
        state.withLock { $0.paused = false }
        wake()
    }

    // MARK: The dispatcher

    private func dispatch() {
        var databaseDown = false
        var upkeepDone = ContinuousClock.now - Self.upkeepInterval
        while isRunning {
            var more = false
            do {
                if ContinuousClock.now - upkeepDone >= Self.upkeepInterval {
                    try upkeep()
                    upkeepDone = ContinuousClock.now
                }
                more = try claimForFreeKinds()
                if databaseDown { logger.info("the job runner reaches the database again") }
                databaseDown = false
            } catch {
                if !databaseDown {
                    logger.warning("the job runner cannot reach the jobs table; trying again", metadata: ["error": "\(error)"])
                }
                databaseDown = true
            }
            guard !more || databaseDown else { continue }
            _ = wakeUp.wait(timeout: .now() + .milliseconds(Int(Self.pollInterval.milliseconds)))
            // Several wake-ups during one wait ask for one look.
            while wakeUp.wait(timeout: .now()) == .success {}
        }
    }

    /// One claim for every kind with a free slot; true when a full batch came back (more
    /// may be due at once).
    private func claimForFreeKinds() throws -> Bool {
        var more = false
        for worker in workers {
            let free = state.withLock { state in
                !state.paused && !state.broken.contains(worker.kind.name)
                    && state.inFlight[worker.kind.name, default: 0] < worker.kind.concurrency
            }
            guard free, isRunning else { continue }
            let jobs = try queue.claim(worker.kind)
            guard !jobs.isEmpty else { continue }
            more = more || jobs.count == worker.kind.batch
            state.withLock { state in
                state.inFlight[worker.kind.name, default: 0] += 1
                state.pending.append(Batch(worker: worker, jobs: jobs))
            }
            work.signal()
        }
        return more
    }

    private func upkeep() throws {
        for worker in workers {
            let died = try queue.expire(worker.kind)
            if !died.isEmpty {
                statistics.died(died.count, of: worker.kind)
                logger.warning("jobs were not tried within their window; they failed",
                               metadata: ["kind": "\(worker.kind)", "count": "\(died.count)"])
                try worker.died?(died, context)
            }
            try worker.upkeep?(context)
        }
    }

    // MARK: The job threads

    private func runBatches() {
        while true {
            work.wait()
            guard isRunning, let batch = state.withLock({ $0.pending.isEmpty ? nil : $0.pending.removeFirst() }) else {
                if !isRunning { return }
                continue
            }
            let healthy = run(batch)
            state.withLock { $0.inFlight[batch.worker.kind.name, default: 1] -= 1 }
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
        case .retry(let reason):
            logger.warning("a job failed; it will be tried again unless its window has passed",
                           metadata: metadata.merging(["error": "\(reason)"]) { $1 })
        case .dead(let reason):
            logger.warning("a job failed and will not be tried again", metadata: metadata.merging(["error": "\(reason)"]) { $1 })
        }
    }
}
