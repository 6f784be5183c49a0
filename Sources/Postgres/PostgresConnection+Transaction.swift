import CLibPQ

/// How much a transaction sees of the others running beside it (PostgreSQL manual, 13.2).
public enum IsolationLevel: Sendable, CaseIterable {
    /// Each statement sees what was committed before it started: PostgreSQL's default.
    case readCommitted
    /// Every statement sees the snapshot taken at the first one; a write to a row that
    /// another transaction changed since fails with 40001.
    case repeatableRead
    /// As if the transactions had run one after the other; may fail with 40001 at any
    /// statement or at COMMIT.
    case serializable

    var beginSQL: String {
        switch self {
        case .readCommitted: "BEGIN ISOLATION LEVEL READ COMMITTED"
        case .repeatableRead: "BEGIN ISOLATION LEVEL REPEATABLE READ"
        case .serializable: "BEGIN ISOLATION LEVEL SERIALIZABLE"
        }
    }
}

/// The transaction steps the pool's `withTransaction` drives.
extension PostgresConnection {
    /// True from `beginLazily` until the commit or rollback, even before the BEGIN went out.
    var isInTransaction: Bool {
        guard let handle else { return false }
        return pendingBegin != nil || PQtransactionStatus(handle) != PQTRANS_IDLE
    }

    /// Starts a transaction without a round trip of its own: the BEGIN goes out with the
    /// first statement.
    func beginLazily(_ isolation: IsolationLevel) {
        pendingBegin = isolation
        transactionFailure = nil
        commitHooks = []
    }

    /// Runs `hook` once the current transaction has committed (at once outside of one),
    /// never if it rolls back: what must follow a commit and only a commit (waking the job
    /// runner for a job the transaction queued). A body run again after a conflict
    /// registers its hooks again; the failed run's are dropped with its rollback.
    public func onCommit(_ hook: @escaping () -> Void) {
        if isInTransaction { commitHooks.append(hook) } else { hook() }
    }

    private func runCommitHooks() {
        let hooks = commitHooks
        commitHooks = []
        for hook in hooks { hook() }
    }

    /// Commits. A transaction in which nothing ran costs nothing; one that failed (its body
    /// caught the error and returned anyway) is rolled back and the error thrown after all,
    /// rather than reporting a COMMIT that PostgreSQL turned into a ROLLBACK.
    func commit(file: String = #fileID, line: Int = #line) throws(PostgresError) {
        guard let handle else { throw PostgresError(.connectionLost, details: "connection is closed", file: file, line: line) }
        if pendingBegin != nil {
            pendingBegin = nil
            return runCommitHooks()
        }
        // Committed already, with its last statement (`queryCommitting`).
        if PQtransactionStatus(handle) == PQTRANS_IDLE { return runCommitHooks() }
        if PQtransactionStatus(handle) == PQTRANS_INERROR {
            let failure = transactionFailure
                ?? PostgresError(.server, sqlState: .inFailedSQLTransaction, details: "the transaction had failed",
                                 file: file, line: line)
            rollback()
            throw failure
        }
        try execute("COMMIT", carryingPrecondition: false, file: file, line: line)
        runCommitHooks()
    }

    /// Ends the transaction, whatever state it is in. A connection whose state is not
    /// clear (ROLLBACK failed, or a statement still running) is closed: the pool then
    /// replaces it instead of lending out a transaction in progress.
    func rollback() {
        pendingBegin = nil
        transactionFailure = nil
        commitHooks = []
        guard let handle else { return }
        switch PQtransactionStatus(handle) {
        case PQTRANS_IDLE:
            return
        case PQTRANS_INTRANS, PQTRANS_INERROR:
            do { try execute("ROLLBACK", carryingPrecondition: false) } catch { close() }
        default:
            close()
        }
    }
}
