import Foundation
import Logging
import Synchronization

/// A thread of its own (never an event loop, never a request's worker) that runs rounds of
/// work until it is stopped: the next round at once while the last one found more, else
/// after `pollInterval` or a `wake()`, whichever comes first; and every `upkeepInterval` an
/// upkeep first (expiring, purging). The mailer's and the push sender's; what a round does
/// is theirs. A round or an upkeep that throws could not reach the database: said once in
/// the log (and its return once more), tried again after the poll.
final class RoundsThread: Sendable {
    struct Log: Sendable {
        /// When the worker (a libcurl handle) cannot be made: the thread ends.
        let cannotStart: Logger.Message
        /// When a round first fails, and when one succeeds after that.
        let unreachable: Logger.Message
        let reachable: Logger.Message
    }

    private let name: String
    private let pollInterval: Duration
    private let upkeepInterval: Duration
    private let logger: Logger
    private let log: Log
    private let running = Atomic<Bool>(false)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Set by `stop()`: the worker's transfer in progress ends within about a second.
    let cancellation = CurlTransfer.Cancellation()

    init(name: String, pollInterval: Duration, upkeepInterval: Duration, logger: Logger, log: Log) {
        self.name = name
        self.pollInterval = pollInterval
        self.upkeepInterval = upkeepInterval
        self.logger = logger
        self.log = log
    }

    var isRunning: Bool { running.load(ordering: .acquiring) }

    /// A round is wanted now rather than at the next poll. Never blocks.
    func wake() {
        wakeUp.signal()
    }

    /// Starts the thread: `makeWorker` once, then rounds over the worker until `stop()`;
    /// a round returns whether it may have left work behind.
    func start<Worker>(makeWorker: @escaping @Sendable () throws -> Worker, upkeep: @escaping @Sendable () throws -> Void,
                       round: @escaping @Sendable (Worker) throws -> Bool) {
        running.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            defer { finished.signal() }
            do {
                run(try makeWorker(), upkeep: upkeep, round: round)
            } catch {
                logger.error(log.cannotStart, metadata: ["error": "\(error)"])
            }
        }
        thread.name = name
        thread.start()
    }

    /// Ends the rounds, cutting a transfer in progress, and waits (5 s at most) for the
    /// thread; false when it was not running.
    @discardableResult
    func stop() -> Bool {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return false }
        cancellation.flag.store(true, ordering: .relaxed)
        wakeUp.signal()
        _ = finished.wait(timeout: .now() + 5)
        return true
    }

    private func run<Worker>(_ worker: Worker, upkeep: () throws -> Void, round: (Worker) throws -> Bool) {
        let (seconds, attoseconds) = pollInterval.components
        let pause = DispatchTimeInterval.milliseconds(Int(seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        var databaseDown = false
        var upkeepDone = ContinuousClock.now - upkeepInterval
        while isRunning {
            var more = false
            do {
                if ContinuousClock.now - upkeepDone >= upkeepInterval {
                    try upkeep()
                    upkeepDone = ContinuousClock.now
                }
                more = try round(worker)
                if databaseDown { logger.info(log.reachable) }
                databaseDown = false
            } catch {
                if !databaseDown { logger.warning(log.unreachable, metadata: ["error": "\(error)"]) }
                databaseDown = true
            }
            guard !more else { continue }
            _ = wakeUp.wait(timeout: .now() + pause)
            // Several wake-ups during one wait ask for one round.
            while wakeUp.wait(timeout: .now()) == .success {}
        }
    }
}
