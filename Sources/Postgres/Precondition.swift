import Synchronization

/// A condition that must hold before anything one unit of work (a request) sends to the
/// primary takes effect: a boolean SQL expression that raises `refutation` when it does not
/// hold. The application uses it to check that a caller it remembered is still the one the
/// database has (`CallerCache`) without a round trip of its own.
///
/// It travels in the work's `DatabaseSession`, a value the work hands the pool
/// (`ConnectionPool.serving(_:)`), and nowhere else. How it is checked:
/// - On the primary, as a statement of its own (`statement`), in the same pipeline and the
///   same Sync segment as the first statement of a connection lent for that session: if it
///   raises, PostgreSQL skips the statement behind it (a pipeline skips everything up to the
///   next Sync after an error, and the two share one implicit transaction, or the one the
///   statement's BEGIN opens). Nothing the work meant to do happens unless it holds, and its
///   error is the one thrown. The statement's text is never touched.
/// - Never on a replica, which may lag: a read that goes to one sends the condition to the
///   primary first, without waiting, and its answer is used only once the primary said the
///   condition held (`withReadConnection`).
///
/// Checked once: the first statement carries it and later ones run alone. Once refuted,
/// nothing more of the work is sent: every statement carrying it throws its error at once,
/// so work that caught the error cannot go on and write. Work that sent nothing, or whose
/// check failed for another reason (a lost connection, a timeout), leaves it `pending`:
/// the next statement carries it again, or the work checks it by itself (`statement`).
public final class Precondition: Sendable {
    public enum Outcome: Sendable {
        /// Not checked yet.
        case pending
        case held
        /// It raised its refutation (the error, also thrown to the statement behind it).
        case refuted(PostgresError)
    }

    /// The boolean expression (it raises `refutation` when it does not hold).
    public let condition: SQLQuery
    /// What the condition raises.
    public let refutation: SQLState
    /// The condition as the statement that carries it.
    public let statement: SQLQuery
    private let state = Mutex<Outcome>(.pending)

    public init(_ condition: SQLQuery, refutation: SQLState) {
        self.condition = condition
        self.refutation = refutation
        statement = "SELECT \(condition) AS held"
    }

    public var outcome: Outcome { state.withLock { $0 } }

    public var isPending: Bool {
        state.withLock { outcome in
            if case .pending = outcome { return true }
            return false
        }
    }

    /// The refutation it raised, if it did.
    public var refutationError: PostgresError? {
        if case .refuted(let error) = outcome { return error }
        return nil
    }

    func recordHeld() {
        state.withLock { $0 = .held }
    }

    /// What its statement's failure says of it: its refutation, or nothing (still unchecked).
    func recordFailure(_ error: PostgresError) {
        guard error.sqlState == refutation else { return }
        state.withLock { $0 = .refuted(error) }
    }
}
