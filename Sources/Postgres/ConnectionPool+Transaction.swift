#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ConnectionPool {
    /// Runs of a transaction's body before a serialization failure or deadlock is passed on.
    public static let transactionAttempts = 8

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// **The body may run more than once.** When two transactions conflict — a
    /// serialization failure (40001) or a deadlock (40P01), at any statement or at COMMIT —
    /// PostgreSQL aborts one of them; that one is rolled back and its body run again from
    /// the start, after a short random pause, up to `transactionAttempts` times. Such
    /// conflicts are a normal part of concurrent writes, not the client's problem. So the
    /// body should do nothing but database work, or only what is safe to repeat, and must
    /// not keep state from a failed run. The connection goes back to the pool for the
    /// pause (another request may use it meanwhile), and the next run may get another one.
    ///
    /// Inside another `withConnection` or `withTransaction` of this pool on the same thread
    /// it uses that same connection. Inside a transaction it joins it: no BEGIN, COMMIT or
    /// retry of its own (the outer transaction's isolation level applies, and a conflict
    /// propagates so the outer body is run again as a whole). Inside a `withConnection`
    /// it retries on that connection, which the outer call holds through the pause.
    ///
    /// The BEGIN costs no round trip: it goes out with the body's first statement, and so
    /// does this copy's precondition if still pending (`serving(_:)`, `Precondition`), between
    /// the two: when it fails, nothing of the body ran.
    @discardableResult
    public func withTransaction<T>(isolation: IsolationLevel = .readCommitted,
                                   _ body: (PostgresConnection) throws -> T) throws -> T {
        if let outer = connectionOnLoan {
            return try outer.carrying(session.precondition) {
                if outer.isInTransaction { return try body(outer) }
                return try Self.retryingConflicts { try runTransaction(on: outer, isolation: isolation, body) }
            }
        }
        return try Self.retryingConflicts {
            try withConnection { try runTransaction(on: $0, isolation: isolation, body) }
        }
    }

    /// A transaction whose statements and COMMIT may each take up to `limit`, on both sides:
    /// the server's `statement_timeout` (for this transaction only) and this side's
    /// `queryTimeout` (for this connection, while it is lent). For bulk work of the
    /// development routes (a snapshot's save or restore, a demo seed), never for a request's
    /// own.
    public func withLongTransaction<T>(limit: Duration, _ body: (PostgresConnection) throws -> T) throws -> T {
        try withConnection { connection in
            let usual = connection.queryTimeout
            // The server's own limit comes first, as for every statement.
            connection.queryTimeout = limit + .milliseconds(1500)
            defer { connection.queryTimeout = usual }
            return try withTransaction { connection in
                try connection.query("""
                    SELECT set_config('statement_timeout', \("\(limit.milliseconds)ms"), true) IS NULL AS set
                    """)
                return try body(connection)
            }
        }
    }

    /// Runs `body` outside a transaction, again (after the same short random pause, without
    /// holding a connection) when it fails with a serialization failure or a deadlock: for
    /// a write that is one statement (data-modifying CTEs), atomic by itself, which then
    /// costs one round trip instead of a transaction's two. The body must be safe to repeat.
    @discardableResult
    public func withRetriedStatement<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        if let outer = connectionOnLoan {
            return try outer.carrying(session.precondition) {
                // Inside a transaction a conflict has aborted it: only the transaction may retry.
                if outer.isInTransaction { return try body(outer) }
                return try Self.retryingConflicts { try body(outer) }
            }
        }
        return try Self.retryingConflicts { try withConnection(body) }
    }

    /// Runs `attempt` up to `transactionAttempts` times while it fails with a conflict.
    private static func retryingConflicts<T>(_ attempt: () throws -> T) throws -> T {
        var count = 1
        while true {
            do {
                return try attempt()
            } catch let error as PostgresError
                        where error.kind == .server && error.sqlState?.meansRetryableConflict == true
                        && count < transactionAttempts {
                backOff(after: count)
                count += 1
            }
        }
    }

    private func runTransaction<T>(on connection: PostgresConnection, isolation: IsolationLevel,
                                   _ body: (PostgresConnection) throws -> T) throws -> T {
        connection.beginLazily(isolation)
        do {
            let result = try body(connection)
            try connection.commit()
            return result
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// Exponential (2, 4, 8 … ms, at most 100 ms) with jitter, so that two transactions that
    /// just collided do not collide again in lockstep.
    private static func backOff(after attempt: Int) {
        let ceiling = min(100_000, 2_000 << min(attempt - 1, 16))
        usleep(UInt32.random(in: UInt32(ceiling / 2)...UInt32(ceiling)))
    }
}
