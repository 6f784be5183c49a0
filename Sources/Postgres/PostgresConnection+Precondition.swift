import CLibPQ

/// How a connection lent for a unit of work sends the work's `Precondition`: the pool hands
/// it over for the loan (`carrying`), the first statement sends it ahead of itself
/// (`query`, `runPipelined`), and a read on a replica has it checked here meanwhile
/// (`checkingCarriedPrecondition`).
extension PostgresConnection {
    /// The carried precondition, while it still waits for a statement; its refutation is
    /// thrown when it raised one (nothing more of the work is sent).
    func pendingPrecondition() throws(PostgresError) -> Precondition? {
        guard let carriedPrecondition else { return nil }
        switch carriedPrecondition.outcome {
        case .pending: return carriedPrecondition.isProvenByAnother() ? nil : carriedPrecondition
        case .held: return nil
        case .refuted(let error): throw error
        }
    }

    /// Runs `body` with `precondition` carried by this connection (whatever its outcome: a
    /// held one is not sent again, a refuted one stops every statement), unless it already
    /// carries one (an outer loan's: the same work's); the outer state is restored after.
    func carrying<T>(_ precondition: Precondition?, _ body: () throws -> T) rethrows -> T {
        guard let precondition, carriedPrecondition == nil else { return try body() }
        carriedPrecondition = precondition
        defer { carriedPrecondition = nil }
        return try body()
    }

    /// Checks `precondition` by itself, now (ahead of a simple query, which cannot share a
    /// pipeline). Its error is thrown; a refutation is also recorded as its outcome.
    func check(_ precondition: Precondition, on handle: OpaquePointer, file: String, line: Int) throws(PostgresError) {
        let plan = makeCheckPlan(precondition, on: handle, file: file, line: line)
        try sendPipeline(plan, on: handle)
        _ = try receivePipeline(plan, on: handle)
    }

    /// Runs `work` (a read on a replica) while the carried precondition is checked here:
    /// its statement is sent and flushed first, and its answer read once `work` is done, or
    /// as soon as anything else is sent here (a read the replica failed, run here instead).
    /// A precondition that did not hold (or could not be checked: a lost connection) makes
    /// this throw that error whatever `work` did: the read counts only on the primary's
    /// word. Without a pending precondition, just `work`.
    func checkingCarriedPrecondition<T>(alongside work: () throws -> T) throws -> T {
        guard let precondition = try pendingPrecondition(), let handle else { return try work() }
        guard pendingBegin == nil, PQtransactionStatus(handle) == PQTRANS_IDLE else {
            // Inside a transaction (not a read's case): simply first.
            try check(precondition, on: handle, file: #fileID, line: #line)
            return try work()
        }
        let plan = makeCheckPlan(precondition, on: handle, file: #fileID, line: #line)
        try sendPipeline(plan, on: handle)
        outstandingCheck = plan
        let result = Result { try work() }
        try awaitOutstandingCheck(file: #fileID, line: #line)
        return try result.get()
    }

    /// Reads the answer of a precondition sent by itself (`checkingCarriedPrecondition`), if
    /// one is outstanding; throws its error when it did not hold.
    func awaitOutstandingCheck(file: String, line: Int) throws(PostgresError) {
        guard let plan = outstandingCheck else { return }
        outstandingCheck = nil
        guard let handle else { throw PostgresError(.connectionLost, details: "connection is closed", file: file, line: line) }
        _ = try receivePipeline(plan, on: handle)
    }
}
