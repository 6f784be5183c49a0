#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A lock that parks a waiting thread at once (a plain pthread mutex). Used instead of
/// `Synchronization.Mutex` where many threads meet: on Linux, Mutex spins before it parks,
/// and with more threads than cores the spinners burn the time the holder needs — the
/// profile of /api/ping showed a quarter of all CPU in Mutex's spin loop.
public final class ParkingLock<State: Sendable>: @unchecked Sendable {
    /// Allocated, not stored inline: a pthread mutex must never move, and `&` on a stored
    /// property does not promise a stable address.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var state: State

    public init(_ state: State) {
        self.state = state
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
