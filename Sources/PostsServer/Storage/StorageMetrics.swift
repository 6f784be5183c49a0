import Locking
import Logging
import Synchronization

/// This instance's requests to the object store, for `/metrics`
/// (`storage_requests_total{op,result}`, `storage_request_duration_seconds{op}`), and
/// whether the last one failed, for `/api/health`'s `"storage"`.
final class StorageMetrics: Sendable {
    enum Operation: String, CaseIterable, Sendable {
        case put, get, head, delete, list
    }

    enum Outcome: String, CaseIterable, Sendable {
        /// An answer we could use (a 404 or a 412 included: they say something true).
        case ok
        case unavailable
        case refused
    }

    struct Key: Hashable, Sendable {
        let operation: Operation
        let outcome: Outcome
    }

    struct Snapshot: Sendable {
        var requests: [Key: Int] = [:]
        var durations: [Operation: RequestMetrics.Histogram] = [:]
    }

    private let state = ParkingLock(Snapshot())
    private let failing = Atomic<Bool>(false)
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    func record<T>(_ operation: Operation, _ result: Result<T, StorageFailure>, since started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let outcome: Outcome
        switch result {
        case .success: outcome = .ok
        case .failure(.unavailable): outcome = .unavailable
        case .failure(.refused): outcome = .refused
        }
        // The log says when the store starts failing, with its words, and when it is back:
        // once each, not once per request of an outage.
        let wasFailing = failing.exchange(outcome != .ok, ordering: .relaxed)
        if case .failure(let failure) = result, !wasFailing {
            logger.error("the object store fails; image uploads and reads answer 503", metadata: ["error": "\(failure)"])
        } else if outcome == .ok && wasFailing {
            logger.info("the object store answers again")
        }
        let bucket = RequestMetrics.buckets.firstIndex { seconds <= $0 }
        state.withLock { state in
            state.requests[Key(operation: operation, outcome: outcome), default: 0] += 1
            state.durations[operation, default: RequestMetrics.Histogram()].record(seconds, bucket: bucket)
        }
    }

    /// Whether the store's last answer on this instance was a failure; `/api/health` says
    /// `"storage":"failing"` until one succeeds (the deletion worker's probe tries every few
    /// seconds while it is so, so the state returns without traffic).
    var isFailing: Bool { failing.load(ordering: .relaxed) }

    var snapshot: Snapshot { state.withLock { $0 } }
}
