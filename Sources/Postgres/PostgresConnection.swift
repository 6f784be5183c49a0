import CLibPQ
#if canImport(Glibc)
import Glibc
#endif

/// One libpq connection, used by one thread at a time: deliberately not `Sendable`, so the
/// compiler stops anyone sharing it (the pool hands it from thread to thread under a lock).
/// Statements are prepared once per connection, keyed by their SQL text, then executed
/// with binary parameters and results.
///
/// Two time limits, for two different failures. A slow statement (a lock wait, a bad plan)
/// is cancelled by the server after `statementTimeout` (SQLSTATE 57014): that request fails,
/// the connection stays good. A server that stops answering at all is caught by the client
/// side `queryTimeout`: the connection is closed, its state being unknown, and the error
/// says the connection was lost.
public final class PostgresConnection {
    private var handle: OpaquePointer?
    private var preparedStatements: [String: String] = [:]
    /// Zero waits forever (migrations, seeding).
    public var queryTimeout: Duration
    private let statementTimeout: Duration

    /// Connects to a libpq connection string or `postgres://` / `postgresql://` URL.
    /// A connection with `queryTimeout: .zero` (migrations, seeding) gets no statement
    /// timeout either.
    public init(conninfo: String, connectTimeout: Duration = .seconds(3), statementTimeout: Duration = .seconds(3),
                queryTimeout: Duration = .milliseconds(4500)) throws(PostgresError) {
        self.queryTimeout = queryTimeout
        self.statementTimeout = queryTimeout == .zero ? .zero : statementTimeout
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
        preparedStatements = [:]
    }

    /// Reconnects with the same parameters (prepared statements are gone with the old
    /// session, so they are forgotten too).
    public func reset() throws(PostgresError) {
        guard let handle else { throw PostgresError(.connectionLost, details: "connection is closed") }
        preparedStatements = [:]
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(.connectionFailed, details: String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines())
        }
        try applySessionSettings()
    }

    /// Once per session, right after connecting: the statement timeout, from our own
    /// configured integer (never from input).
    private func applySessionSettings() throws(PostgresError) {
        guard statementTimeout > .zero else { return }
        let milliseconds = max(1, statementTimeout.milliseconds)
        do {
            try execute(unsafeSQL: "SET statement_timeout = \(milliseconds)")
        } catch {
            close()
            throw PostgresError(.connectionFailed, sqlState: error.sqlState, details: "setting statement_timeout: \(error.details)")
        }
    }

    /// Connected and outside any transaction, judged from libpq's state alone (no system
    /// call): good enough to put a connection back; `isUsable` looks closer on the way out.
    var isIdleInSession: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// False once the connection is broken or the server has signalled that it is going
    /// away (an idle connection has nothing to read unless the server closed it).
    public var isUsable: Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) == PQTRANS_IDLE else {
            return false
        }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 0
    }

    /// Runs one statement with bound parameters and returns its rows.
    @discardableResult
    public func query(_ query: SQLQuery, file: String = #fileID, line: Int = #line) throws(PostgresError) -> PostgresResult {
        guard let handle else { throw PostgresError(.connectionLost, details: "connection is closed", file: file, line: line) }
        let name = try prepare(query, on: handle, file: file, line: line)
        let binds = query.binds
        var storage: [UInt8] = []
        var lengths: [Int32] = []
        for bind in binds {
            storage += bind.bytes ?? []
            lengths.append(Int32(bind.bytes?.count ?? 0))
        }
        // One spare byte so that even an empty, non-NULL value has a valid pointer.
        storage.append(0)
        let formats = [Int32](repeating: 1, count: binds.count)
        let sent = storage.withUnsafeBufferPointer { buffer -> Int32 in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            var offset = 0
            let pointers: [UnsafePointer<CChar>?] = binds.map { bind in
                guard let bytes = bind.bytes else { return nil }
                defer { offset += bytes.count }
                return (base + offset).assumingMemoryBound(to: CChar.self)
            }
            return PQsendQueryPrepared(handle, name, Int32(binds.count), pointers, lengths, formats, 1)
        }
        guard sent == 1 else { throw connectionError(handle, sql: query.sql, file: file, line: line) }
        return try awaitResult(on: handle, sql: query.sql, file: file, line: line)
    }

    /// Runs SQL text without parameters, possibly several statements (migrations,
    /// transaction control). Never give it input.
    public func execute(unsafeSQL sql: String, file: String = #fileID, line: Int = #line) throws(PostgresError) {
        guard let handle else { throw PostgresError(.connectionLost, details: "connection is closed", file: file, line: line) }
        guard PQsendQuery(handle, sql) == 1 else { throw connectionError(handle, sql: sql, file: file, line: line) }
        _ = try awaitResult(on: handle, sql: sql, file: file, line: line)
    }

    private func prepare(_ query: SQLQuery, on handle: OpaquePointer, file: String, line: Int) throws(PostgresError) -> String {
        if let name = preparedStatements[query.sql] { return name }
        let name = "s\(preparedStatements.count)"
        let types = query.binds.map { $0.type.rawValue }
        guard PQsendPrepare(handle, name, query.sql, Int32(types.count), types) == 1 else {
            throw connectionError(handle, sql: query.sql, file: file, line: line)
        }
        _ = try awaitResult(on: handle, sql: query.sql, file: file, line: line)
        preparedStatements[query.sql] = name
        return name
    }

    /// Waits (bounded) for the statement to finish and collects its result. On a timeout the
    /// connection is closed: its state is unknown, and the pool will replace it.
    private func awaitResult(on handle: OpaquePointer, sql: String, file: String, line: Int) throws(PostgresError) -> PostgresResult {
        let deadline = queryTimeout == .zero ? nil : ContinuousClock.now + queryTimeout
        var final: OpaquePointer?
        var failure: PostgresError?
        while true {
            while PQisBusy(handle) == 1 {
                var wait: Int32 = -1
                if let deadline {
                    let remaining = ContinuousClock.now.duration(to: deadline)
                    guard remaining > .zero else {
                        if let final { PQclear(final) }
                        close()
                        throw PostgresError(.connectionLost, details: "no answer within \(queryTimeout): \(sql)", file: file, line: line)
                    }
                    wait = Int32(clamping: remaining.milliseconds)
                }
                var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, wait)
                if ready < 0 && errno != EINTR {
                    if let final { PQclear(final) }
                    throw connectionError(handle, sql: sql, file: file, line: line)
                }
                if ready > 0 && PQconsumeInput(handle) == 0 {
                    if let final { PQclear(final) }
                    throw connectionError(handle, sql: sql, file: file, line: line)
                }
            }
            guard let result = PQgetResult(handle) else { break }
            switch PQresultStatus(result) {
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
                if let final { PQclear(final) }
                final = result
            default:
                if failure == nil { failure = serverError(result, handle: handle, sql: sql, file: file, line: line) }
                PQclear(result)
            }
        }
        if let failure {
            if let final { PQclear(final) }
            throw failure
        }
        guard let final else { throw connectionError(handle, sql: sql, file: file, line: line) }
        return PostgresResult(handle: final, sql: sql)
    }

    private func serverError(_ result: OpaquePointer, handle: OpaquePointer, sql: String, file: String, line: Int) -> PostgresError {
        let message = String(cString: PQresultErrorMessage(result)).trimmingTrailingNewlines()
        guard let code = PQresultErrorField(result, Int32(UInt8(ascii: "C"))) else {
            return PostgresError(.connectionLost, details: "\(message) in: \(sql)", file: file, line: line)
        }
        let state = SQLState(rawValue: String(cString: code))
        if PQstatus(handle) != CONNECTION_OK {
            return PostgresError(.connectionLost, sqlState: state, details: "\(message) in: \(sql)", file: file, line: line)
        }
        return PostgresError(.server, sqlState: state, details: "\(message) in: \(sql)", file: file, line: line)
    }

    private func connectionError(_ handle: OpaquePointer, sql: String, file: String, line: Int) -> PostgresError {
        let message = String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines()
        return PostgresError(.connectionLost, details: "\(message) in: \(sql)", file: file, line: line)
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

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while let last = text.last, last.isNewline { text.removeLast() }
        return String(text)
    }
}
