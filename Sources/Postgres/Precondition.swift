import Dispatch
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
///
/// Proven by another's check: preconditions that share a `Witness` (one remembered caller's
/// requests) state the same condition, so one whose statement was sent after this one was
/// made, and held, proves this one too: its snapshot was taken later, and any change that
/// could refute this one had committed before this one was made. Such a precondition is
/// marked held without a statement of its own (a caller's parallel requests, an app's
/// launch, share one check).
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
    /// Shared with the other preconditions made from the same `Statement`.
    private let witness: Witness
    /// When the work it guards arrived (monotonic ns): a check of the same condition sent
    /// later proves it.
    private let made: UInt64
    /// When its own statement was last sent (0: not yet).
    private let sent = Atomic<UInt64>(0)

    public convenience init(_ condition: SQLQuery, refutation: SQLState) {
        self.init(Statement(condition), refutation: refutation)
    }

    /// A precondition whose statement was built beforehand (a remembered caller's proof is
    /// the same for every request of that caller: built once, not per request).
    /// `arrivedAt` (`DispatchTime` uptime, ns, no later than now): when the work it guards
    /// had arrived, whatever its sender did before had happened; a check of the same
    /// statement sent after that proves it. Now when not given.
    public init(_ statement: Statement, refutation: SQLState, arrivedAt: UInt64? = nil) {
        condition = statement.condition
        self.refutation = refutation
        self.statement = statement.statement
        witness = statement.witness
        made = min(arrivedAt ?? .max, DispatchTime.now().uptimeNanoseconds)
    }

    /// What the preconditions of one condition share: when the latest check of it that
    /// held was sent.
    final class Witness: Sendable {
        let heldWhenSent = Atomic<UInt64>(0)
    }

    /// True, and marked held, when a check of the same condition sent after this one was
    /// made has held.
    func isProvenByAnother() -> Bool {
        guard witness.heldWhenSent.load(ordering: .acquiring) > made else { return false }
        recordHeld()
        return true
    }

    /// Its statement is about to go out: a success proves those made before now.
    func recordSending() {
        sent.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
    }

    /// A condition and the statement that carries it, built once and used for many checks,
    /// which share what the latest one that held proves (`Witness`).
    public struct Statement: Sendable {
        public let condition: SQLQuery
        public let statement: SQLQuery
        let witness = Witness()

        public init(_ condition: SQLQuery) {
            self.condition = condition
            statement = "SELECT \(condition) AS held"
        }
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
        let sentAt = sent.load(ordering: .relaxed)
        guard sentAt > 0 else { return }
        var known = witness.heldWhenSent.load(ordering: .relaxed)
        while known < sentAt {
            let (exchanged, original) = witness.heldWhenSent.compareExchange(expected: known, desired: sentAt, ordering: .acquiringAndReleasing)
            if exchanged { break }
            known = original
        }
    }

    /// What its statement's failure says of it: its refutation, or nothing (still unchecked).
    func recordFailure(_ error: PostgresError) {
        guard error.sqlState == refutation else { return }
        state.withLock { $0 = .refuted(error) }
    }
}
