import Locking
import Synchronization

/// What an instance does when a snapshot was restored, by it or by another instance on the
/// database: its caches of rows drop what they hold and its event streams end. Each part
/// registers here; `fire` runs them all, once per restore (`DevState` tells restores apart
/// by their count).
final class RestoreObservers: Sendable {
    private let observers = ParkingLock<[@Sendable () -> Void]>([])
    private let seen = Atomic<Int64>(0)

    func add(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Runs the observers if `generation` (the database's count of restores) is one this
    /// instance has not acted on yet.
    func fire(generation: Int64) {
        var known = seen.load(ordering: .relaxed)
        while known < generation {
            let (exchanged, original) = seen.compareExchange(expected: known, desired: generation, ordering: .acquiringAndReleasing)
            if exchanged {
                for observer in observers.withLock({ $0 }) { observer() }
                return
            }
            known = original
        }
    }

    /// The count as first read at start: restores before it are none of this instance's.
    func start(at generation: Int64) {
        seen.store(generation, ordering: .relaxed)
    }
}
