import CLibPQ
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One libpq connection, used by one thread at a time: deliberately not `Sendable`, so the
/// compiler stops anyone sharing it (the pool hands it from thread to thread under a lock).
/// Statements are prepared once per connection, keyed by their SQL text and parameter
/// types, then executed with binary parameters and results.
///
/// Two time limits, for two different failures. A slow statement (a lock wait, a bad plan)
/// is cancelled by the server after `statementTimeout` (SQLSTATE 57014): that request fails,
/// the connection stays good. A server that stops answering at all is caught by the client
/// side `queryTimeout`: the connection is closed, its state being unknown, and the error
/// says the connection was lost.
public final class PostgresConnection {
    // Internal rather than private: the pipeline, result and transaction extensions use them.
    var handle: OpaquePointer?
    var statements: PreparedStatementCache
    /// Names evicted from `statements` whose DEALLOCATE has not got through yet.
    var pendingDeallocations: [String] = []
    /// Set by `beginLazily`: the BEGIN travels with the transaction's first statement.
    var pendingBegin: IsolationLevel?
    /// The first server error of the current transaction, for a body that caught it.
    var transactionFailure: PostgresError?
    /// What runs once the current transaction has committed (`onCommit`).
    var commitHooks: [() -> Void] = []
    /// The precondition of the work this connection is lent for, while it is lent
    /// (`carrying`): the next statement sends it ahead of itself if it is still pending.
    var carriedPrecondition: Precondition?
    /// A precondition sent on its own whose answer has not been read yet
    /// (`checkingCarriedPrecondition`): read before anything else is sent.
    var outstandingCheck: PipelinePlan?
    /// Zero waits forever (migrations, seeding).
    public var queryTimeout: Duration
    /// Zero: none, even if the role or database sets one (a migration may run for minutes).
    /// Nil behind a transaction-mode pooler, which keeps no session setting.
    private let statementTimeout: Duration?
    /// Custom settings of the session (`posts.push`), set again after every reconnect.
    private let sessionSettings: [(name: String, value: String)]
    /// The server end is a transaction-mode pooler's: nothing of the session outlives a
    /// transaction (no named statement, no `SET`).
    public let behindTransactionPooler: Bool

    /// Connects to a libpq connection string or `postgres://` / `postgresql://` URL.
    /// A connection with `queryTimeout: .zero` (migrations, seeding) gets no statement
    /// timeout either. `sessionSettings` are set with `set_config` right after connecting
    /// (their values bound, never spliced into SQL); one the server refuses fails the connect.
    ///
    /// `behindTransactionPooler`: every statement is PostgreSQL's unnamed one, and neither
    /// the statement timeout nor `sessionSettings` is set, since the next transaction may run
    /// on another server connection (the pooler's or the role's settings apply there; README
    /// "Scaling out"). `queryTimeout` still bounds a statement from this side.
    public init(conninfo: String, connectTimeout: Duration = .seconds(3), statementTimeout: Duration = .seconds(3),
                queryTimeout: Duration = .milliseconds(4500), preparedStatementCapacity: Int = 256,
                sessionSettings: [(name: String, value: String)] = [],
                behindTransactionPooler: Bool = false) throws(PostgresError) {
        self.queryTimeout = queryTimeout
        self.statementTimeout = behindTransactionPooler ? nil : queryTimeout == .zero ? .zero : statementTimeout
        self.sessionSettings = behindTransactionPooler ? [] : sessionSettings
        self.behindTransactionPooler = behindTransactionPooler
        statements = PreparedStatementCache(capacity: preparedStatementCapacity, namesStatements: !behindTransactionPooler)
        let keywords = ["dbname", "connect_timeout", "application_name", "client_encoding"]
        let values = [conninfo, String(max(1, connectTimeout.components.seconds)), "posts-server", "UTF8"]
        let connection = Self.withCStrings(keywords) { keywordPointers in
            Self.withCStrings(values) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection else { throw PostgresError(.connectionFailed, details: "libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(.connectionFailed, details: message)
        }
        // Notices ("relation already exists, skipping") would go to stderr, around the log.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
        try applySessionSettings()
    }

    deinit { close() }

    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        forgetSession()
    }

    /// Reconnects with the same parameters (prepared statements are gone with the old
    /// session, so they are forgotten too).
    public func reset() throws(PostgresError) {
        guard let handle else { throw PostgresError(.connectionLost, details: "connection is closed") }
        forgetSession()
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(.connectionFailed, details: String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines())
        }
        try applySessionSettings()
    }

    private func forgetSession() {
        statements.removeAll()
        pendingDeallocations = []
        pendingBegin = nil
        transactionFailure = nil
        outstandingCheck = nil
    }

    /// Once per session, right after connecting: the statement timeout, from our own
    /// configured integer (never from input), then the configured settings. A session
    /// without them is not the one asked for: it is closed and the connect fails.
    private func applySessionSettings() throws(PostgresError) {
        if let statementTimeout {
            let milliseconds = statementTimeout > .zero ? max(1, statementTimeout.milliseconds) : 0
            do {
                try execute(unsafeSQL: "SET statement_timeout = \(milliseconds)")
            } catch {
                close()
                throw PostgresError(.connectionFailed, sqlState: error.sqlState, details: "setting statement_timeout: \(error.details)")
            }
        }
        for setting in sessionSettings {
            do {
                try query("SELECT set_config(\(setting.name), \(setting.value), false)")
            } catch {
                close()
                throw PostgresError(.connectionFailed, sqlState: error.sqlState, details: "setting \(setting.name): \(error.details)")
            }
        }
    }

    /// Connected, outside any transaction and out of pipeline mode, judged from libpq's
    /// state alone (no system call): good enough to put a connection back; `isUsable`
    /// looks closer on the way out.
    var isIdleInSession: Bool {
        guard let handle, pendingBegin == nil, outstandingCheck == nil else { return false }
        return PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
            && PQpipelineStatus(handle) == PQ_PIPELINE_OFF
    }

    /// False once the connection is broken or the server has signalled that it is going
    /// away (an idle connection has nothing to read unless the server closed it).
    public var isUsable: Bool {
        guard let handle, isIdleInSession else { return false }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 0
    }

    /// Runs one statement with bound parameters and returns its rows. When the connection
    /// carries a pending precondition, it goes ahead of the statement, in its pipeline.
    @discardableResult
    public func query(_ query: SQLQuery, file: String = #fileID, line: Int = #line) throws(PostgresError) -> PostgresResult {
        guard let handle else { throw PostgresError(.connectionLost, details: "connection is closed", file: file, line: line) }
        if outstandingCheck != nil { try awaitOutstandingCheck(file: file, line: line) }
        let precondition = try pendingPrecondition()
        let key = PreparedStatementCache.Key(sql: query.sql, parameterTypes: query.binds.map(\.type.rawValue))
        let name = statements.name(for: key)
        guard let name, pendingBegin == nil, pendingDeallocations.isEmpty, precondition == nil else {
            return try runPipelined(query, key: key, preparedName: name, preconditions: precondition.map { [$0] } ?? [],
                                    on: handle, file: file, line: line)
        }
        // The common case, as cheap as before there was a pipeline: one message, one answer.
        guard sendPrepared(name, binds: query.binds, on: handle) else {
            throw connectionError(handle, sql: query.sql, file: file, line: line)
        }
        return try awaitResult(on: handle, sql: query.sql, file: file, line: line)
    }

    /// Runs one statement on behalf of several units of work at once (a batch of requests'
    /// writes, `WriteCoalescer`): each one's pending precondition goes ahead of it, with the
    /// carried one, in its Sync segment. The first that raises skips the statement and the
    /// checks behind it (they stay pending) and is thrown; its own outcome says which it was.
    @discardableResult
    public func query(_ query: SQLQuery, checking preconditions: [Precondition], file: String = #fileID,
                      line: Int = #line) throws(PostgresError) -> PostgresResult {
        guard let handle else { throw PostgresError(.connectionLost, details: "connection is closed", file: file, line: line) }
        if outstandingCheck != nil { try awaitOutstandingCheck(file: file, line: line) }
        var pending: [Precondition] = []
        for precondition in [try pendingPrecondition()].compactMap({ $0 }) + preconditions {
            switch precondition.outcome {
            case .refuted(let error): throw error
            case .held: continue
            case .pending:
                if pending.contains(where: { $0 === precondition }) || precondition.isProvenByAnother() { continue }
                pending.append(precondition)
            }
        }
        guard !pending.isEmpty else { return try self.query(query, file: file, line: line) }
        let key = PreparedStatementCache.Key(sql: query.sql, parameterTypes: query.binds.map(\.type.rawValue))
        return try runPipelined(query, key: key, preparedName: statements.name(for: key), preconditions: pending,
                                on: handle, file: file, line: line)
    }

    /// Runs the transaction's last statement and commits it, in one round trip (the COMMIT
    /// goes out in the same pipeline). If the statement fails the COMMIT is skipped and the
    /// transaction left failed, to be rolled back; once this returns, the transaction has
    /// committed (its `onCommit` hooks have run, and `commit()` has nothing left to do).
    @discardableResult
    public func queryCommitting(_ query: SQLQuery, file: String = #fileID, line: Int = #line) throws(PostgresError) -> PostgresResult {
        guard let handle else { throw PostgresError(.connectionLost, details: "connection is closed", file: file, line: line) }
        guard isInTransaction else { return try self.query(query, file: file, line: line) }
        if outstandingCheck != nil { try awaitOutstandingCheck(file: file, line: line) }
        let key = PreparedStatementCache.Key(sql: query.sql, parameterTypes: query.binds.map(\.type.rawValue))
        let result = try runPipelined(query, key: key, preparedName: statements.name(for: key), committing: true,
                                      preconditions: try pendingPrecondition().map { [$0] } ?? [], on: handle,
                                      file: file, line: line)
        try commit(file: file, line: line)
        return result
    }

    /// Runs SQL text without parameters, possibly several statements (migrations,
    /// transaction control). Never give it input.
    public func execute(unsafeSQL sql: String, file: String = #fileID, line: Int = #line) throws(PostgresError) {
        try execute(sql, carryingPrecondition: true, file: file, line: line)
    }

    /// `carryingPrecondition`: false for the transaction's own COMMIT or ROLLBACK, which
    /// need no check (the statements before them carried it, or there were none).
    func execute(_ sql: String, carryingPrecondition: Bool, file: String = #fileID, line: Int = #line) throws(PostgresError) {
        guard let handle else { throw PostgresError(.connectionLost, details: "connection is closed", file: file, line: line) }
        if outstandingCheck != nil { try awaitOutstandingCheck(file: file, line: line) }
        // A simple query cannot share a pipeline: a pending precondition is checked first, alone.
        if carryingPrecondition, let precondition = try pendingPrecondition() {
            try check(precondition, on: handle, file: file, line: line)
        }
        // Several statements in one simple query: a pending BEGIN simply goes first.
        let text = pendingBegin.map { "\($0.beginSQL);\n\(sql)" } ?? sql
        guard PQsendQuery(handle, text) == 1 else { throw connectionError(handle, sql: sql, file: file, line: line) }
        do {
            _ = try awaitResult(on: handle, sql: sql, file: file, line: line)
            pendingBegin = nil
        } catch {
            // A failure after the BEGIN ran leaves the transaction open (and failed).
            if let handle = self.handle, PQtransactionStatus(handle) != PQTRANS_IDLE { pendingBegin = nil }
            throw error
        }
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        return body(copies.map { UnsafePointer($0) } + [nil])
    }
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }
}
