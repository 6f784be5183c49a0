#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A statement that must hold for the work a thread is about to do, checked for free: it
/// travels in the same pipeline as the first statement the thread then sends, on whatever
/// connection, ahead of it and before their common Sync. If it fails, PostgreSQL skips the
/// statement behind it (a pipeline skips everything up to the next Sync after an error,
/// and the two share one implicit transaction), so nothing the thread meant to do happens
/// and the precondition's error is the one thrown. The application uses it to check that
/// a caller it remembered is still the one the database has (`CallerCache`) without a
/// round trip of its own.
///
/// Set for a scope with `checking(_:_:)`, on the thread that does the work (a thread-local
/// slot, like `LentConnection`: handlers run on plain threads and use their connections
/// synchronously). A scope that sent no statement at all leaves it `pending`: the caller
/// must check it by itself then.
public final class Precondition {
    public enum Outcome: Sendable {
        /// Not sent yet.
        case pending
        case held
        /// The statement failed (its error, also thrown to the statement behind it).
        case failed(PostgresError)
    }

    public let statement: SQLQuery
    public internal(set) var outcome: Outcome = .pending

    init(_ statement: SQLQuery) {
        self.statement = statement
    }

    var isPending: Bool {
        if case .pending = outcome { return true }
        return false
    }

    /// Runs `body` with `statement` as the precondition of the first statement it sends on
    /// this thread; returns the body's result (or error) and what became of the precondition.
    public static func checking<T>(_ statement: SQLQuery, _ body: () throws -> T) -> (Result<T, any Error>, Precondition) {
        let precondition = Precondition(statement)
        let outer = slot.current
        slot.set(precondition)
        defer { slot.set(outer) }
        return (Result { try body() }, precondition)
    }

    /// The precondition still waiting for a statement on this thread, if any.
    static var pendingOnThisThread: Precondition? {
        guard let precondition = slot.current, precondition.isPending else { return nil }
        return precondition
    }

    private static let slot = ThreadSlot()

    private final class ThreadSlot: Sendable {
        private let key: pthread_key_t

        init() {
            var key = pthread_key_t()
            let status = pthread_key_create(&key, nil)
            precondition(status == 0, "pthread_key_create failed (\(status))")
            self.key = key
        }

        /// Stored unretained: the `checking` frame that stored it keeps it alive until it
        /// puts the outer one back.
        var current: Precondition? {
            pthread_getspecific(key).map { Unmanaged<Precondition>.fromOpaque($0).takeUnretainedValue() }
        }

        func set(_ precondition: Precondition?) {
            pthread_setspecific(key, precondition.map { Unmanaged.passUnretained($0).toOpaque() })
        }
    }
}
