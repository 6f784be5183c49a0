import CLibPQ

/// One round trip where the plain protocol would take several.
///
/// A statement seen for the first time needs a Prepare before its Execute; the first
/// statement of a transaction needs a BEGIN before it; a statement evicted from the cache
/// needs a DEALLOCATE. Sent one by one, each costs a round trip. In libpq's pipeline mode
/// they go out together and the answers come back in order, so the caller waits once.
///
/// Why this is safe:
/// - The server runs a pipeline's messages in order and, after an error, skips the rest
///   up to the next Sync (`skipped`), so a statement never runs after its BEGIN or Prepare
///   failed, and the first error is the one reported.
/// - DEALLOCATEs go first, in a Sync segment of their own: even if one failed, it could
///   not undo or skip the statement (outside a transaction) nor come between a BEGIN and
///   its statement. One that did not get through stays pending for the next statement;
///   none is sent in a failed transaction, where it could only fail. (Prepared statements
///   are not transactional: a rollback undoes neither a Prepare nor a DEALLOCATE.)
/// - The cache learns a name only once its Prepare is reported done, and the BEGIN counts
///   as sent only once it succeeded, so their state always matches the server's.
/// - Every answer is read, up to each Sync marker, before leaving pipeline mode, so the
///   connection is back in its plain state; if anything is out of step or too slow, the
///   connection is closed instead, and the error says the connection was lost.
/// - A plan may be sent and its answers read later (a precondition checked on the primary
///   while a replica reads: `checkingCarriedPrecondition`); nothing else is sent in
///   between, since every statement first reads what is outstanding.
extension PostgresConnection {
    /// What one pipeline sends, decided before anything is sent, so that its answers can be
    /// read later than it was sent (`checkingCarriedPrecondition`).
    struct PipelinePlan {
        /// A precondition's statement, ahead of the plan's statement in its Sync segment.
        struct Check {
            let precondition: Precondition
            let key: PreparedStatementCache.Key
            /// Its prepared name, or the name a Prepare sent with it gives it (`prepare`).
            let name: String
            let prepare: Bool
        }

        let query: SQLQuery
        let key: PreparedStatementCache.Key
        let name: String
        let prepare: Bool
        let begin: IsolationLevel?
        let deallocations: [String]
        /// Preconditions' statements ahead of the statement, in its Sync segment: the first
        /// that raises skips the rest (they stay pending) and the statement.
        let checks: [Check]
        let committing: Bool
        /// Set when `query` is this precondition's own statement, sent alone.
        let alone: Precondition?
        let deadline: ContinuousClock.Instant?
        let file: String
        let line: Int
    }

    func runPipelined(_ query: SQLQuery, key: PreparedStatementCache.Key, preparedName: String?, committing: Bool = false,
                      preconditions: [Precondition] = [],
                      on handle: OpaquePointer, file: String, line: Int) throws(PostgresError) -> PostgresResult {
        let plan = makePlan(query, key: key, preparedName: preparedName, committing: committing, preconditions: preconditions,
                            alone: nil, on: handle, file: file, line: line)
        try sendPipeline(plan, on: handle)
        return try receivePipeline(plan, on: handle)
    }

    /// The plan of a pipeline that sends `precondition`'s statement by itself.
    func makeCheckPlan(_ precondition: Precondition, on handle: OpaquePointer, file: String, line: Int) -> PipelinePlan {
        let statement = precondition.statement
        let key = PreparedStatementCache.Key(sql: statement.sql, parameterTypes: statement.binds.map(\.type.rawValue))
        return makePlan(statement, key: key, preparedName: statements.name(for: key), committing: false, preconditions: [],
                        alone: precondition, on: handle, file: file, line: line)
    }

    private func makePlan(_ query: SQLQuery, key: PreparedStatementCache.Key, preparedName: String?, committing: Bool,
                          preconditions: [Precondition], alone: Precondition?,
                          on handle: OpaquePointer, file: String, line: Int) -> PipelinePlan {
        let name = preparedName ?? statements.makeName()
        // Each precondition's statement, built once by the precondition: its cache key, its
        // prepared name if any, else a new one (which must differ from the statement's own).
        // Preconditions of one text (a batch's) share one Prepare, sent with the first.
        var preparing: [PreparedStatementCache.Key: String] = [:]
        let checks = preconditions.map { precondition -> PipelinePlan.Check in
            let statement = precondition.statement
            let key = PreparedStatementCache.Key(sql: statement.sql, parameterTypes: statement.binds.map(\.type.rawValue))
            if let preparedName = statements.name(for: key) ?? preparing[key] {
                return PipelinePlan.Check(precondition: precondition, key: key, name: preparedName, prepare: false)
            }
            let name = statements.makeName()
            preparing[key] = name
            return PipelinePlan.Check(precondition: precondition, key: key, name: name, prepare: true)
        }
        return PipelinePlan(query: query, key: key, name: name, prepare: preparedName == nil, begin: pendingBegin,
                            deallocations: PQtransactionStatus(handle) == PQTRANS_INERROR ? [] : pendingDeallocations,
                            checks: checks, committing: committing, alone: alone, deadline: deadline, file: file, line: line)
    }

    /// Sends the whole plan and flushes it; nothing is read. On failure the connection is
    /// closed.
    func sendPipeline(_ plan: PipelinePlan, on handle: OpaquePointer) throws(PostgresError) {
        guard send(plan, on: handle) else {
            let error = connectionError(handle, sql: plan.query.sql, file: plan.file, line: plan.line)
            close()
            throw error
        }
    }

    /// Reads every answer of a plan sent, up to its last Sync, and leaves pipeline mode.
    func receivePipeline(_ plan: PipelinePlan, on handle: OpaquePointer) throws(PostgresError) -> PostgresResult {
        let (file, line, deadline, query) = (plan.file, plan.line, plan.deadline, plan.query)
        var failure: PostgresError?
        var result: PostgresResult?
        do throws(PostgresError) {
            if !plan.deallocations.isEmpty {
                for evicted in plan.deallocations {
                    let sql = "DEALLOCATE \(evicted)"
                    if case .succeeded = try readOutcome(on: handle, until: deadline, sql: sql, file: file, line: line) {
                        pendingDeallocations.removeAll { $0 == evicted }
                    }
                }
                try readSync(on: handle, until: deadline, sql: query.sql, file: file, line: line)
            }
            if let begin = plan.begin {
                switch try readOutcome(on: handle, until: deadline, sql: begin.beginSQL, file: file, line: line) {
                case .succeeded: pendingBegin = nil
                case .failed(let error): failure = error
                case .skipped: break
                }
            }
            for check in plan.checks {
                let sql = check.precondition.statement.sql
                if check.prepare {
                    switch try readOutcome(on: handle, until: deadline, sql: sql, file: file, line: line) {
                    case .succeeded:
                        if let evicted = statements.insert(check.key, name: check.name) { pendingDeallocations.append(evicted) }
                    case .failed(let error): failure = failure ?? error
                    case .skipped: break
                    }
                }
                switch try readOutcome(on: handle, until: deadline, sql: sql, file: file, line: line) {
                case .succeeded: check.precondition.recordHeld()
                case .failed(let error):
                    check.precondition.recordFailure(error)
                    failure = failure ?? error
                // Its BEGIN failed: still unchecked.
                case .skipped: break
                }
            }
            if plan.prepare {
                switch try readOutcome(on: handle, until: deadline, sql: query.sql, file: file, line: line) {
                case .succeeded:
                    if let evicted = statements.insert(plan.key, name: plan.name) { pendingDeallocations.append(evicted) }
                case .failed(let error):
                    failure = failure ?? error
                    plan.alone?.recordFailure(error)
                case .skipped: break
                }
            }
            switch try readOutcome(on: handle, until: deadline, sql: query.sql, file: file, line: line) {
            case .succeeded(let rows):
                result = rows
                plan.alone?.recordHeld()
            case .failed(let error):
                failure = failure ?? error
                plan.alone?.recordFailure(error)
            // (Sent alone after a BEGIN that failed: still unchecked.)
            case .skipped: break
            }
            if plan.committing {
                switch try readOutcome(on: handle, until: deadline, sql: "COMMIT", file: file, line: line) {
                case .succeeded: break
                case .failed(let error): failure = failure ?? error
                case .skipped: break
                }
            }
            try readSync(on: handle, until: deadline, sql: query.sql, file: file, line: line)
            guard PQexitPipelineMode(handle) == 1 else { throw connectionError(handle, sql: query.sql, file: file, line: line) }
        } catch {
            close()
            throw error
        }
        if let failure { throw failure }
        guard let result else { throw PostgresError(.connectionLost, details: "no result in: \(query.sql)", file: file, line: line) }
        return result
    }

    private func send(_ plan: PipelinePlan, on handle: OpaquePointer) -> Bool {
        guard PQenterPipelineMode(handle) == 1 else { return false }
        for check in plan.checks { check.precondition.recordSending() }
        plan.alone?.recordSending()
        if !plan.deallocations.isEmpty {
            for evicted in plan.deallocations where !sendCommand("DEALLOCATE \(evicted)", on: handle) { return false }
            guard PQpipelineSync(handle) == 1 else { return false }
        }
        if let begin = plan.begin, !sendCommand(begin.beginSQL, on: handle) { return false }
        // The preconditions go between the BEGIN and the statement, in the same Sync
        // segment: if one fails, the statement is skipped.
        for check in plan.checks {
            let statement = check.precondition.statement
            if check.prepare {
                let types = statement.binds.map(\.type.rawValue)
                guard PQsendPrepare(handle, check.name, statement.sql, Int32(types.count), types) == 1 else { return false }
            }
            guard sendPrepared(check.name, binds: statement.binds, on: handle) else { return false }
        }
        if plan.prepare {
            let types = plan.query.binds.map(\.type.rawValue)
            guard PQsendPrepare(handle, plan.name, plan.query.sql, Int32(types.count), types) == 1 else { return false }
        }
        guard sendPrepared(plan.name, binds: plan.query.binds, on: handle) else { return false }
        if plan.committing, !sendCommand("COMMIT", on: handle) { return false }
        return PQpipelineSync(handle) == 1
    }

    /// A parameterless command through the extended protocol: pipeline mode has no
    /// simple-query messages.
    private func sendCommand(_ sql: String, on handle: OpaquePointer) -> Bool {
        PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 1) == 1
    }

    /// Bind + Execute of a prepared statement, parameters and results in binary.
    func sendPrepared(_ name: String, binds: [PostgresValue], on handle: OpaquePointer) -> Bool {
        var storage: [UInt8] = []
        var lengths: [Int32] = []
        for bind in binds {
            storage += bind.bytes ?? []
            lengths.append(Int32(bind.bytes?.count ?? 0))
        }
        // One spare byte so that even an empty, non-NULL value has a valid pointer.
        storage.append(0)
        let formats = [Int32](repeating: 1, count: binds.count)
        return storage.withUnsafeBufferPointer { buffer -> Int32 in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            var offset = 0
            let pointers: [UnsafePointer<CChar>?] = binds.map { bind in
                guard let bytes = bind.bytes else { return nil }
                defer { offset += bytes.count }
                return (base + offset).assumingMemoryBound(to: CChar.self)
            }
            return PQsendQueryPrepared(handle, name, Int32(binds.count), pointers, lengths, formats, 1)
        } == 1
    }
}
