import Dispatch
import Locking
import Synchronization

/// A fixed number of connections shared by the request threads. A caller that finds them
/// all busy waits at most `checkoutTimeout` and then fails with `.poolTimeout` (503)
/// rather than queueing forever. Connections are made lazily and checked on every
/// checkout, so after a database restart the stale ones are replaced without anyone
/// noticing more than the outage itself.
///
/// A value with the pool's shared state behind it: every copy lends the same connections.
/// A copy made by `serving(_:)` also carries one unit of work's `DatabaseSession` (its read
/// floor, its precondition) into every connection it lends, so a service holding such a
/// copy does that work's database work without being told again.
public struct ConnectionPool: Sendable {
    public struct Configuration: Sendable {
        public var conninfo: String
        public var size: Int
        public var checkoutTimeout: Duration = .seconds(3)
        public var connectTimeout: Duration = .seconds(2)
        /// The server cancels a statement running longer (SQLSTATE 57014): that request
        /// fails as unavailable (503), the connection and the pool stay good. Zero: no limit.
        public var statementTimeout: Duration = .seconds(3)
        /// The client-side hard limit, for a server that stops answering at all: the
        /// connection is closed and counts as lost. Defaults to `statementTimeout` + 1.5 s,
        /// so the server's own cancellation always comes first.
        public var queryTimeout: Duration {
            get { explicitQueryTimeout ?? statementTimeout + .milliseconds(1500) }
            set { explicitQueryTimeout = newValue }
        }
        /// Prepared statements kept per connection (least recently used ones are dropped).
        public var preparedStatementCapacity = 256
        /// Settings every connection of the pool has for its whole session (`set_config`
        /// right after connecting, and again after a reconnect), such as a custom setting
        /// that triggers read (`posts.push`). One the server refuses fails the connect.
        public var sessionSettings: [(name: String, value: String)] = []
        /// `conninfo` is a pooler in transaction mode (`DATABASE_POOLER=transaction`): no
        /// named statement or session setting (see `PostgresConnection.init`).
        public var behindTransactionPooler = false
        private var explicitQueryTimeout: Duration?

        public init(conninfo: String, size: Int) {
            self.conninfo = conninfo
            self.size = max(1, size)
        }
    }

    public struct Statistics: Sendable, Equatable {
        public let inUse: Int
        public let idle: Int
        public let waiting: Int

        public init(inUse: Int, idle: Int, waiting: Int) {
            self.inUse = inUse
            self.idle = idle
            self.waiting = waiting
        }
    }

    /// What every copy shares: the connections and their accounting.
    private final class Shared: Sendable {
        let configuration: Configuration
        let replicas: ReplicaSet?
        let slots: DispatchSemaphore
        let idle = IdleConnections()
        let lent = LentConnection()
        let inUse = Atomic<Int>(0)
        let waiting = Atomic<Int>(0)
        /// Set when the database failed to connect or answer; cleared by the next success.
        let databaseDown = Atomic<Bool>(false)
        /// While the database is down, the one caller allowed to try it.
        let probing = Atomic<Bool>(false)

        init(_ configuration: Configuration, replicas: ReplicaSet?) {
            self.configuration = configuration
            self.replicas = replicas
            slots = DispatchSemaphore(value: configuration.size)
        }
    }

    private let shared: Shared
    /// The work this copy serves (`serving(_:)`); `.none` for a pool as made.
    public let session: DatabaseSession

    public init(_ configuration: Configuration, replicas: ReplicaSet? = nil) {
        shared = Shared(configuration, replicas: replicas?.replicas.isEmpty == false ? replicas : nil)
        session = .none
    }

    private init(shared: Shared, session: DatabaseSession) {
        self.shared = shared
        self.session = session
    }

    /// The same pool, lending its connections for the work `session` describes: its reads go
    /// where its floor allows (`withReadConnection`), and the first statement it sends to the
    /// primary carries its precondition.
    public func serving(_ session: DatabaseSession) -> ConnectionPool {
        ConnectionPool(shared: shared, session: session)
    }

    public var configuration: Configuration { shared.configuration }
    /// The streaming replicas `withReadConnection` may read from instead (none: all here).
    public var replicas: ReplicaSet? { shared.replicas }

    public var statistics: Statistics {
        Statistics(inUse: shared.inUse.load(ordering: .relaxed), idle: shared.idle.count,
                   waiting: shared.waiting.load(ordering: .relaxed))
    }

    /// Lends a connection for the duration of `body`; it is the pool's again once `body`
    /// returns, so do not keep it. Called inside another `withConnection` or
    /// `withTransaction` of this pool on the same thread, it lends the same connection
    /// again (see `LentConnection`). The connection carries this copy's precondition while
    /// `body` runs, if it is still pending (`Precondition`).
    ///
    /// While the database is down, one caller at a time tries it (the probe) and the others
    /// fail at once: a frozen or vanished server would otherwise cost every queued request
    /// a full timeout. The first answer from the server ends the outage for everyone. Only
    /// a failed connect or a lost connection marks it down: a statement the server
    /// cancelled (statement_timeout) or refused says nothing against the database.
    @discardableResult
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        if let connection = shared.lent.current {
            return try connection.carrying(session.precondition) { try body(connection) }
        }
        var isProbe = false
        if shared.databaseDown.load(ordering: .relaxed) {
            guard shared.probing.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
                throw PostgresError(.connectionFailed, details: "the database is down; another request is probing it")
            }
            isProbe = true
        }
        defer { if isProbe { shared.probing.store(false, ordering: .releasing) } }
        do {
            let result = try lend(body)
            if isProbe { shared.databaseDown.store(false, ordering: .relaxed) }
            return result
        } catch let error as PostgresError where error.kind == .connectionFailed || error.kind == .connectionLost {
            shared.databaseDown.store(true, ordering: .relaxed)
            throw error
        } catch let error as PostgresError where error.kind == .server {
            if isProbe { shared.databaseDown.store(false, ordering: .relaxed) }
            throw error
        }
    }

    /// The connection this thread has on loan from this pool, if it is inside one of its
    /// `withConnection` or `withTransaction` calls.
    var connectionOnLoan: PostgresConnection? { shared.lent.current }

    /// True after a failure to reach the database, until a request gets through again.
    public var isDatabaseDown: Bool { shared.databaseDown.load(ordering: .relaxed) }

    /// Someone else reached the database (a replica's monitor): no need to probe it first.
    func markReachable() {
        shared.databaseDown.store(false, ordering: .relaxed)
    }

    private func lend<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let configuration = shared.configuration
        shared.waiting.add(1, ordering: .relaxed)
        let acquired = shared.slots.wait(timeout: .now() + .nanoseconds(Int(configuration.checkoutTimeout.nanoseconds)))
        shared.waiting.subtract(1, ordering: .relaxed)
        guard acquired == .success else {
            throw PostgresError(.poolTimeout, details: "all \(configuration.size) connections stayed busy for \(configuration.checkoutTimeout)")
        }
        shared.inUse.add(1, ordering: .relaxed)
        defer {
            shared.inUse.subtract(1, ordering: .relaxed)
            shared.slots.signal()
        }
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try shared.lent.lending(connection) {
            try connection.carrying(session.precondition) { try body(connection) }
        }
    }

    /// Closes the idle connections; connections on loan close when they come back.
    public func close() {
        shared.idle.removeAll().forEach { $0.close() }
    }

    private func checkOut() throws(PostgresError) -> PostgresConnection {
        while let connection = shared.idle.pop() {
            if connection.isUsable { return connection }
            connection.close()
        }
        let configuration = shared.configuration
        return try PostgresConnection(conninfo: configuration.conninfo, connectTimeout: configuration.connectTimeout,
                                      statementTimeout: configuration.statementTimeout,
                                      queryTimeout: configuration.queryTimeout,
                                      preparedStatementCapacity: configuration.preparedStatementCapacity,
                                      sessionSettings: configuration.sessionSettings,
                                      behindTransactionPooler: configuration.behindTransactionPooler)
    }

    /// A connection left broken or inside a transaction is not reused.
    private func checkIn(_ connection: PostgresConnection) {
        guard connection.isIdleInSession else {
            connection.close()
            return
        }
        shared.idle.push(connection)
    }
}

/// The idle connections, the one place a connection crosses threads. `PostgresConnection`
/// is not `Sendable` because two threads must never use one at once; here one goes in only
/// when the thread that used it is done with it (check-in), and comes out to exactly one
/// next thread (check-out), both under the lock, so it always has a single user. The
/// unchecked wrapper stays private to this type so that nothing else can move one.
/// (`push` cannot take it `sending`: the compiler cannot see that the body given to
/// `withConnection` kept no reference, which is that method's documented contract.)
private final class IdleConnections: Sendable {
    private struct Parked: @unchecked Sendable {
        let connection: PostgresConnection
    }

    private let parked = ParkingLock<[Parked]>([])

    var count: Int { parked.withLock { $0.count } }

    func push(_ connection: PostgresConnection) {
        parked.withLock { $0.append(Parked(connection: connection)) }
    }

    func pop() -> sending PostgresConnection? {
        parked.withLock { $0.popLast() }?.connection
    }

    func removeAll() -> sending [PostgresConnection] {
        parked.withLock { list in
            defer { list = [] }
            return list.map(\.connection)
        }
    }
}

extension Duration {
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
