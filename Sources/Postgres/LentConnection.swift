#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which connection of one pool the current thread has on loan, so that a
/// `withConnection` or `withTransaction` nested inside another uses it instead of checking
/// out a second one. Checking out a second one would deadlock the pool the moment every
/// connection is lent to a thread that waits for another, and would put the inner work
/// outside the outer transaction.
///
/// A thread-local slot (a pthread key of the pool's own): handlers run on plain threads,
/// not Swift tasks, and a thread only ever reads the connection it stored itself, so the
/// non-`Sendable` connection never leaves its thread through here.
final class LentConnection: Sendable {
    private let key: pthread_key_t

    init() {
        var key = pthread_key_t()
        // Fails only past PTHREAD_KEYS_MAX (1024) live pools: a leak, not a condition to handle.
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed (\(status)): too many connection pools alive")
        self.key = key
    }

    deinit { pthread_key_delete(key) }

    /// The connection this thread is inside `withConnection` with, if any. Stored
    /// unretained: the `lending` frame that stored it keeps it alive until it clears it.
    var current: PostgresConnection? {
        pthread_getspecific(key).map { Unmanaged<PostgresConnection>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Runs `body` with `connection` as this thread's current one.
    func lending<T>(_ connection: PostgresConnection, _ body: () throws -> T) rethrows -> T {
        pthread_setspecific(key, Unmanaged.passUnretained(connection).toOpaque())
        defer { pthread_setspecific(key, nil) }
        return try body()
    }
}
