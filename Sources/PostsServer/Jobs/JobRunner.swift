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
/// queues the recurring kinds' jobs where they are missing, kills what waited past its
/// window and runs the kinds' upkeep.
final class JobRunner: Sendable {
    let workers: [JobWorker]
    private let pool: ConnectionPool
    let queue: JobQueue
    let clock: ServerClock
    let logger: Logger
    let statistics = JobStatistics()
    private let running = Atomic<Bool>(false)
    let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    let state = ParkingLock(State())
    let work = DispatchSemaphore(value: 0)
    /// Broadcast when a round of the dispatcher or a batch ends: what `pause` and `drain`
    /// wait on (see `settle`).
    let settled = NSCondition()
    /// Set by `stop()`: a transfer in progress (libcurl's) ends within about a second.
    let cancellation = CurlTransfer.Cancellation()

    static let pollInterval: Duration = .seconds(1)
    static let upkeepInterval: Duration = .seconds(2)

    struct Batch {
        let worker: JobWorker
        let jobs: [ClaimedJob]
    }

    /// A handler between batches. Handlers are not thread-safe (a libcurl handle): one is
    /// handed from job thread to job thread under the state's lock, and used by one at a time.
    final class IdleHandler: @unchecked Sendable {
        let handler: any JobHandler
        init(_ handler: any JobHandler) { self.handler = handler }
    }

    struct State {
        var inFlight: [String: Int] = [:]
        var pending: [Batch] = []
        /// Idle handlers by kind (made on first need, kept for the next batch).
        var handlers: [String: [IdleHandler]] = [:]
        /// Kinds whose handler could not be made: never claimed again on this instance.
        var broken: Set<String> = []
        /// Claims nothing while set (`pause()`).
        var paused = false
        /// Kinds not claimed on this instance until released (`hold(_:)`).
        var held: Set<String> = []
        var threads = 0
        /// The dispatcher's rounds begun and ended, and the batches it claimed: how `drain`
        /// knows that a round has looked since it asked.
        var roundsBegun = 0
        var roundsEnded = 0
        var batchesClaimed = 0

        /// No batch waiting for a job thread or running.
        var isIdle: Bool { pending.isEmpty && inFlight.values.allSatisfy { $0 == 0 } }
    }

    init(workers: [JobWorker], conninfo: String, pooler: DatabaseTopology.Pooler = .none, clock: ServerClock, logger: Logger) {
        self.workers = workers
        pool = DatabaseSessions.pool(conninfo: conninfo, size: 2, pooler: pooler)
        queue = JobQueue(pool: pool, clock: clock)
        self.clock = clock
        self.logger = logger
        clock.onAdvance { [weak self] in self?.wake() }
    }

    var context: JobContext {
        JobContext(pool: pool, clock: clock, logger: logger, isRunning: { [self] in isRunning }, wake: { [weak self] in self?.wake() })
    }

    var isRunning: Bool { running.load(ordering: .acquiring) }

    /// The kinds this instance runs.
    var kinds: [JobKind] { workers.map(\.kind) }

    /// What writes use to queue this instance's kinds and wake it.
    var scheduler: JobScheduler {
        JobScheduler(enabled: Set(kinds), wake: { [weak self] in self?.wake() }, clock: clock)
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
        settle()
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
        _ = waitUntil(Date(timeIntervalSinceNow: 10)) { $0.isIdle }
    }

    func resume() {
        state.withLock { $0.paused = false }
        wake()
    }

    // MARK: The dispatcher

    private func dispatch() {
        var databaseDown = false
        var upkeepDone = ContinuousClock.now - Self.upkeepInterval
        var upkeptOnce = false
        while isRunning {
            state.withLock { $0.roundsBegun += 1 }
            var more = false
            do {
                if ContinuousClock.now - upkeepDone >= Self.upkeepInterval {
                    try upkeep(starting: !upkeptOnce)
                    upkeepDone = ContinuousClock.now
                    upkeptOnce = true
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
            state.withLock { $0.roundsEnded += 1 }
            settle()
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
        for worker in workers where isRunning {
            // The slot is taken in the same locked moment that finds the runner not paused, so
            // a `pause()` waits for this claim too.
            let reserved = state.withLock { state in
                guard !state.paused, !state.broken.contains(worker.kind.name), !state.held.contains(worker.kind.name),
                      state.inFlight[worker.kind.name, default: 0] < worker.kind.concurrency else { return false }
                state.inFlight[worker.kind.name, default: 0] += 1
                return true
            }
            guard reserved else { continue }
            let jobs: [ClaimedJob]
            do {
                jobs = try queue.claim(worker.kind)
            } catch {
                state.withLock { $0.inFlight[worker.kind.name, default: 1] -= 1 }
                throw error
            }
            guard !jobs.isEmpty else {
                state.withLock { $0.inFlight[worker.kind.name, default: 1] -= 1 }
                continue
            }
            more = more || jobs.count == worker.kind.batch
            state.withLock { state in
                state.pending.append(Batch(worker: worker, jobs: jobs))
                state.batchesClaimed += 1
            }
            work.signal()
        }
        return more
    }

    /// The recurring kinds this instance runs have their job (due at once when the runner is
    /// `starting`); every kind's jobs left past their window die, whether or not this
    /// instance runs the kind (jobs queued where no runner of theirs is left would wait for
    /// ever); the kinds it runs hear of theirs, and run their own upkeep.
    private func upkeep(starting: Bool) throws {
        try queue.keepRecurring(kinds, dueNow: starting)
        for kind in JobKind.all {
            let died = try queue.expire(kind)
            guard !died.isEmpty else { continue }
            statistics.died(died.count, of: kind)
            logger.warning("jobs were not tried within their window; they failed", metadata: ["kind": "\(kind)", "count": "\(died.count)"])
            try workers.first { $0.kind == kind }?.died?(died, context)
        }
        for worker in workers { try worker.upkeep?(context) }
    }
}
