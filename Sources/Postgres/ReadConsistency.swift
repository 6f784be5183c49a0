#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How fresh the reads of the work a thread is doing must be: the position in the primary's
/// log that a replica must have replayed to serve them (a write the reader must see, named
/// by its `Read-After` token or remembered for its author). `ConnectionPool.withReadConnection`
/// goes to a replica only when it is that far, and to the primary otherwise.
///
/// A thread-local slot, like `Precondition`'s: request handlers run on plain threads and
/// do their reads synchronously. The position is stored in the slot's pointer itself.
public enum ReadConsistency {
    /// Runs `body` with `position` as the reads' floor on this thread (nil: any replica
    /// within the lag limit will do); the outer floor is restored after.
    public static func requiring<T>(_ position: LogSequenceNumber?, _ body: () throws -> T) rethrows -> T {
        let outer = pthread_getspecific(slot.key)
        pthread_setspecific(slot.key, position.flatMap { UnsafeRawPointer(bitPattern: UInt($0.value)) })
        defer { pthread_setspecific(slot.key, outer) }
        return try body()
    }

    /// The floor set for this thread; nil when there is none.
    public static var current: LogSequenceNumber? {
        pthread_getspecific(slot.key).map { LogSequenceNumber(value: UInt64(UInt(bitPattern: $0))) }
    }

    private static let slot = Slot()

    private final class Slot: Sendable {
        let key: pthread_key_t

        init() {
            var key = pthread_key_t()
            let status = pthread_key_create(&key, nil)
            precondition(status == 0, "pthread_key_create failed (\(status))")
            self.key = key
        }
    }
}
