import CLibPQ
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading what the server sends back, every wait bounded by `queryTimeout`.
extension PostgresConnection {
    /// What one statement came to. In a pipeline, a statement after a failed one is
    /// `skipped` (libpq's PGRES_PIPELINE_ABORTED): the server did not run it.
    enum Outcome {
        case succeeded(PostgresResult)
        case failed(PostgresError)
        case skipped
    }

    var deadline: ContinuousClock.Instant? { queryTimeout == .zero ? nil : .now + queryTimeout }

    /// Waits for the statement just sent and collects its result.
    func awaitResult(on handle: OpaquePointer, sql: String, file: String, line: Int) throws(PostgresError) -> PostgresResult {
        switch try readOutcome(on: handle, until: deadline, sql: sql, file: file, line: line) {
        case .succeeded(let result): return result
        case .failed(let error): throw error
        case .skipped: throw connectionError(handle, sql: sql, file: file, line: line)
        }
    }

    /// Reads one statement's results, up to the NULL that ends them. With several
    /// statements in one simple query it keeps the last result and the first error.
    func readOutcome(on handle: OpaquePointer, until deadline: ContinuousClock.Instant?, sql: String,
                     file: String, line: Int) throws(PostgresError) -> Outcome {
        var final: PostgresResult?
        var failure: PostgresError?
        var skipped = false
        while let result = try nextResult(on: handle, until: deadline, sql: sql, file: file, line: line) {
            switch PQresultStatus(result) {
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
                final = PostgresResult(handle: result, sql: sql)
            case PGRES_PIPELINE_ABORTED:
                skipped = true
                PQclear(result)
            default:
                if failure == nil { failure = serverError(result, handle: handle, sql: sql, file: file, line: line) }
                PQclear(result)
            }
        }
        if let failure {
            if PQtransactionStatus(handle) == PQTRANS_INERROR, transactionFailure == nil { transactionFailure = failure }
            return .failed(failure)
        }
        if let final { return .succeeded(final) }
        if skipped { return .skipped }
        throw connectionError(handle, sql: sql, file: file, line: line)
    }

    /// Reads the marker that ends a pipeline segment. Anything else means the pipeline is
    /// out of step with what we sent: the caller must close the connection.
    func readSync(on handle: OpaquePointer, until deadline: ContinuousClock.Instant?, sql: String,
                  file: String, line: Int) throws(PostgresError) {
        let result = try nextResult(on: handle, until: deadline, sql: sql, file: file, line: line)
        defer { PQclear(result) }
        guard let result, PQresultStatus(result) == PGRES_PIPELINE_SYNC else {
            throw connectionError(handle, sql: sql, file: file, line: line)
        }
    }

    /// The next result once libpq has all of it. Past the deadline the server is asked to
    /// stop (`AbandonedStatements`) and the connection is closed: its state is unknown,
    /// and the pool will replace it.
    private func nextResult(on handle: OpaquePointer, until deadline: ContinuousClock.Instant?, sql: String,
                            file: String, line: Int) throws(PostgresError) -> OpaquePointer? {
        while PQisBusy(handle) == 1 {
            var wait: Int32 = -1
            if let deadline {
                let remaining = ContinuousClock.now.duration(to: deadline)
                guard remaining > .zero else {
                    AbandonedStatements.cancel(on: handle)
                    close()
                    throw PostgresError(.connectionLost, details: "no answer within \(queryTimeout): \(sql)", file: file, line: line)
                }
                wait = Int32(clamping: remaining.milliseconds)
            }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, wait)
            if ready < 0 && errno != EINTR { throw connectionError(handle, sql: sql, file: file, line: line) }
            if ready > 0 && PQconsumeInput(handle) == 0 { throw connectionError(handle, sql: sql, file: file, line: line) }
        }
        return PQgetResult(handle)
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

    func connectionError(_ handle: OpaquePointer, sql: String, file: String, line: Int) -> PostgresError {
        let message = String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines()
        return PostgresError(.connectionLost, details: "\(message) in: \(sql)", file: file, line: line)
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while let last = text.last, last.isNewline { text.removeLast() }
        return String(text)
    }
}
