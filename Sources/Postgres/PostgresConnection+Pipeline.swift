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
extension PostgresConnection {
    func runPipelined(_ query: SQLQuery, key: PreparedStatementCache.Key, preparedName: String?, committing: Bool = false,
                      precondition: Precondition? = nil,
                      on handle: OpaquePointer, file: String, line: Int) throws(PostgresError) -> PostgresResult {
        let name = preparedName ?? statements.makeName()
        let deallocations = PQtransactionStatus(handle) == PQTRANS_INERROR ? [] : pendingDeallocations
        let begin = pendingBegin
        let deadline = self.deadline
        // The precondition's statement, built once: (it, its cache key, its prepared name if
        // any, the name it goes by; a new one must differ from the statement's own).
        let check = precondition.map { precondition in
            let statement = precondition.statement
            let key = PreparedStatementCache.Key(sql: statement.sql, parameterTypes: statement.binds.map(\.type.rawValue))
            let preparedName = statements.name(for: key)
            return (statement, key, preparedName, preparedName ?? statements.makeName())
        }
        var failure: PostgresError?
        var result: PostgresResult?
        do throws(PostgresError) {
            guard send(query, name: name, prepare: preparedName == nil, begin: begin, deallocations: deallocations,
                       check: check.map { ($0.0, $0.3, $0.2 == nil) }, committing: committing, on: handle) else {
                throw connectionError(handle, sql: query.sql, file: file, line: line)
            }
            if !deallocations.isEmpty {
                for evicted in deallocations {
                    let sql = "DEALLOCATE \(evicted)"
                    if case .succeeded = try readOutcome(on: handle, until: deadline, sql: sql, file: file, line: line) {
                        pendingDeallocations.removeAll { $0 == evicted }
                    }
                }
                try readSync(on: handle, until: deadline, sql: query.sql, file: file, line: line)
            }
            if let begin {
                switch try readOutcome(on: handle, until: deadline, sql: begin.beginSQL, file: file, line: line) {
                case .succeeded: pendingBegin = nil
                case .failed(let error): failure = error
                case .skipped: break
                }
            }
            if let precondition, let (checkStatement, checkKey, checkPrepared, checkName) = check {
                let sql = checkStatement.sql
                if checkPrepared == nil {
                    switch try readOutcome(on: handle, until: deadline, sql: sql, file: file, line: line) {
                    case .succeeded:
                        if let evicted = statements.insert(checkKey, name: checkName) { pendingDeallocations.append(evicted) }
                    case .failed(let error): failure = failure ?? error
                    case .skipped: break
                    }
                }
                switch try readOutcome(on: handle, until: deadline, sql: sql, file: file, line: line) {
                case .succeeded: precondition.outcome = .held
                case .failed(let error):
                    precondition.outcome = .failed(error)
                    failure = failure ?? error
                // Its BEGIN failed: still unchecked.
                case .skipped: break
                }
            }
            if preparedName == nil {
                switch try readOutcome(on: handle, until: deadline, sql: query.sql, file: file, line: line) {
                case .succeeded:
                    if let evicted = statements.insert(key, name: name) { pendingDeallocations.append(evicted) }
                case .failed(let error): failure = failure ?? error
                case .skipped: break
                }
            }
            switch try readOutcome(on: handle, until: deadline, sql: query.sql, file: file, line: line) {
            case .succeeded(let rows): result = rows
            case .failed(let error): failure = failure ?? error
            case .skipped: break
            }
            if committing {
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

    private func send(_ query: SQLQuery, name: String, prepare: Bool, begin: IsolationLevel?, deallocations: [String],
                      check: (statement: SQLQuery, name: String, prepare: Bool)?, committing: Bool,
                      on handle: OpaquePointer) -> Bool {
        guard PQenterPipelineMode(handle) == 1 else { return false }
        if !deallocations.isEmpty {
            for evicted in deallocations where !sendCommand("DEALLOCATE \(evicted)", on: handle) { return false }
            guard PQpipelineSync(handle) == 1 else { return false }
        }
        if let begin, !sendCommand(begin.beginSQL, on: handle) { return false }
        // The precondition goes between the BEGIN and the statement, in the same Sync
        // segment: if it fails, the statement is skipped.
        if let check {
            if check.prepare {
                let types = check.statement.binds.map(\.type.rawValue)
                guard PQsendPrepare(handle, check.name, check.statement.sql, Int32(types.count), types) == 1 else { return false }
            }
            guard sendPrepared(check.name, binds: check.statement.binds, on: handle) else { return false }
        }
        if prepare {
            let types = query.binds.map(\.type.rawValue)
            guard PQsendPrepare(handle, name, query.sql, Int32(types.count), types) == 1 else { return false }
        }
        guard sendPrepared(name, binds: query.binds, on: handle) else { return false }
        if committing, !sendCommand("COMMIT", on: handle) { return false }
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
