/// What one unit of work (a request) asks of the database beyond its statements: how fresh
/// its reads must be, and the condition its first statement on the primary must carry.
/// A value the work passes to the pool (`ConnectionPool.serving(_:)`), like the rest of its
/// state; no thread keeps it. Work given no session (background jobs) reads any replica
/// within the lag limit and carries no condition.
public struct DatabaseSession: Sendable {
    /// The position in the primary's log that a replica must have replayed to serve the
    /// work's reads (a write the reader must see, named by its `Read-After` token or
    /// remembered for its author); nil: any replica within the lag limit will do.
    public var readFloor: LogSequenceNumber?
    /// Checked on the primary with the work's first statement there (`Precondition`).
    public var precondition: Precondition?

    public init(readFloor: LogSequenceNumber? = nil, precondition: Precondition? = nil) {
        self.readFloor = readFloor
        self.precondition = precondition
    }

    public static let none = DatabaseSession()

    /// The precondition when it has not been checked yet.
    var pendingPrecondition: Precondition? {
        guard let precondition, precondition.isPending, !precondition.isProvenByAnother() else { return nil }
        return precondition
    }

    /// Throws the precondition's refutation if it raised one: nothing more of the work goes out.
    func requireNotRefuted() throws(PostgresError) {
        if let error = precondition?.refutationError { throw error }
    }
}
