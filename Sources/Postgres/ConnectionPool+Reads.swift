extension ConnectionPool {
    /// Lends a connection for a read: one of a replica that has replayed this thread's
    /// `ReadConsistency` floor and is within the lag limit, in turn; the primary (this pool)
    /// when none is, or when the read is part of work already holding a primary connection
    /// (a transaction's reads must see its writes).
    ///
    /// The body must only read: it may run twice. A replica that cannot be reached is marked
    /// down and the read runs again on the primary, as does one PostgreSQL cancelled for a
    /// conflict with recovery (40001), or one whose replica's connections all stayed busy.
    @discardableResult
    public func withReadConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        guard let replicas, connectionOnLoan == nil else { return try withConnection(body) }
        guard let replica = replicas.choose(floor: ReadConsistency.current) else {
            replicas.primaryReads.add(1, ordering: .relaxed)
            return try withConnection(body)
        }
        do {
            let result = try replica.pool.withConnection(body)
            replica.reads.add(1, ordering: .relaxed)
            return result
        } catch let error as PostgresError where error.kind == .connectionFailed || error.kind == .connectionLost {
            replica.record(.down, lag: nil, replayed: nil)
        } catch let error as PostgresError where error.kind == .poolTimeout {
            // Its connections all busy: the primary may have one.
        } catch let error as PostgresError where error.sqlState == .serializationFailure {
            // Canceled on the replica for a conflict with recovery: the primary has no such conflict.
        }
        replicas.primaryReads.add(1, ordering: .relaxed)
        return try withConnection(body)
    }
}
