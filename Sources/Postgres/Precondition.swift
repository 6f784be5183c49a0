#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A condition that must hold for the work a thread is about to do, checked for free with
/// the first statement the thread then sends, on whatever connection: a boolean SQL
/// expression that raises an error when it does not hold. The application uses it to check
/// that a caller it remembered is still the one the database has (`CallerCache`) without a
/// round trip of its own.
///
/// How it travels with that statement:
/// - A plain `SELECT` is wrapped, `SELECT * FROM (statement) checked WHERE (SELECT condition)`:
///   a condition without columns is a one-time filter, evaluated when execution starts,
///   before any row is read; the same columns come back in the same order.
/// - Anything else (a write, a `WITH` that may hold one, which cannot be nested) is
///   preceded by `SELECT condition` in the same pipeline, before their common Sync: if it
///   fails, PostgreSQL skips the statement behind it (a pipeline skips everything up to the
///   next Sync after an error, and the two share one implicit transaction).
/// Either way nothing the thread meant to do happens unless it holds, and its error is the
/// one thrown.
///
/// Set for a scope with `checking(_:refutation:_:)`, on the thread that does the work (a thread-local
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

    /// The boolean expression (it raises `refutation` when it does not hold).
    public let condition: SQLQuery
    /// What the condition raises; another error of a wrapped statement leaves it unchecked.
    public let refutation: SQLState
    /// The condition as a statement of its own.
    public var statement: SQLQuery { "SELECT \(condition) AS held" }
    public internal(set) var outcome: Outcome = .pending

    init(_ condition: SQLQuery, refutation: SQLState) {
        self.condition = condition
        self.refutation = refutation
    }

    /// `query` with the condition as its one-time filter, when `query` is a plain `SELECT`.
    func wrapping(_ query: SQLQuery) -> SQLQuery? {
        guard Self.isPlainSelect(query.sql) else { return nil }
        var wrapped = SQLQuery(unsafeSQL: "SELECT * FROM (\n")
        wrapped.append(query)
        wrapped.append("\n) checked WHERE (SELECT ")
        wrapped.append(condition)
        wrapped.append(")")
        return wrapped
    }

    private static func isPlainSelect(_ sql: String) -> Bool {
        let start = sql.utf8.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") }
        return start.starts(with: "SELECT ".utf8)
    }

    var isPending: Bool {
        if case .pending = outcome { return true }
        return false
    }

    /// Runs `body` with `condition` as the precondition of the first statement it sends on
    /// this thread; returns the body's result (or error) and what became of the precondition.
    public static func checking<T>(_ condition: SQLQuery, refutation: SQLState,
                                   _ body: () throws -> T) -> (Result<T, any Error>, Precondition) {
        let precondition = Precondition(condition, refutation: refutation)
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
