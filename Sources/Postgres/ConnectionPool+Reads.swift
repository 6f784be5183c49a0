extension ConnectionPool {
    /// Lends a connection for a read: one of a replica that has replayed this copy's session
    /// floor (`DatabaseSession.readFloor`) and is within the lag limit, in turn; the primary
    /// (this pool) when none is, or when the read is part of work already holding a primary
    /// connection (a transaction's reads must see its writes).
    ///
    /// The session's precondition is the primary's to judge, never a replica's (a revoked
    /// token or a suspension must count at once, not once replayed): a read that goes to a
    /// replica while it is pending sends it to the primary first, without waiting, reads on
    /// the replica meanwhile, and answers only once the primary said it held; if it did not,
    /// the read's result is dropped and the precondition's error thrown. On the primary the
    /// read itself carries it (`Precondition`).
    ///
    /// The body must only read: it may run twice. A replica that cannot be reached is marked
    /// down and the read runs again on the primary, as does one PostgreSQL cancelled for a
    /// conflict with recovery (40001), or one whose replica's connections all stayed busy.
    @discardableResult
    public func withReadConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try session.requireNotRefuted()
        guard let replicas, connectionOnLoan == nil else { return try withConnection(body) }
        guard let replica = replicas.choose(floor: session.readFloor) else {
            replicas.primaryReads.add(1, ordering: .relaxed)
            return try withConnection(body)
        }
        guard session.pendingPrecondition != nil else { return try read(on: replica, replicas: replicas, body) }
        return try withConnection { primary in
            try primary.checkingCarriedPrecondition(alongside: { try read(on: replica, replicas: replicas, body) })
        }
    }

    /// The read on `replica`, or on the primary when the replica fails it.
    private func read<T>(on replica: ReplicaSet.Replica, replicas: ReplicaSet, _ body: (PostgresConnection) throws -> T) throws -> T {
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
        // (Inside `checkingCarriedPrecondition` this is the primary connection already lent,
        // whose first statement waits for the precondition's answer first.)
        return try withConnection(body)
    }
}
