import Locking
import Postgres
import Synchronization

/// The faults in force (API.md "Faults"), trust mode only: kept in `dev_faults` so that
/// every instance on the database applies them, read into memory here (`DevState` reads
/// them again on each announcement), and counted in the database as they hit, so that
/// `times` and a seeded `probability` hold across instances.
final class DevFaults: Sendable {
    private let pool: ConnectionPool
    private let clock: ServerClock
    /// The faults in force, and the read they came from (`DevState.ticket()`).
    private let faults = ParkingLock<(list: [Fault], read: UInt64)>(([], 0))
    /// Whether any is in force: a request looks no further when none is.
    private let armed = Atomic<Bool>(false)

    init(pool: ConnectionPool, clock: ServerClock) {
        self.pool = pool
        self.clock = clock
    }

    var isArmed: Bool { armed.load(ordering: .relaxed) }

    /// Every fault, oldest first, with its hits.
    static func read(on connection: PostgresConnection) throws -> [Fault] {
        try connection.query("SELECT * FROM dev_faults ORDER BY id").rows.map(Fault.init(row:))
    }

    /// The faults as the read numbered `read` found them; an earlier read's are ignored.
    func replace(with list: [Fault], read: UInt64) {
        faults.withLock { state in
            guard read > state.read else { return }
            state = (list, read)
            armed.store(!list.isEmpty, ordering: .relaxed)
        }
    }

    /// Reads the faults back after this instance changed them: in force here at once. The
    /// change has committed: a failed read must not answer 503 (a retried create would
    /// make a second fault); the announcement brings it here soon all the same.
    private func refreshAfterCommit() {
        let ticket = DevState.ticket()
        if let all = try? list() { replace(with: all, read: ticket) }
    }

    func list() throws -> [Fault] {
        try pool.withConnection { try Self.read(on: $0) }
    }

    /// Saves a new fault and announces it; in force here at once.
    func create(_ fault: Fault) throws -> Fault {
        let created = try pool.withTransaction { connection -> Fault in
            let row = try connection.query("""
                INSERT INTO dev_faults (method, path, status, latency_ms, drop_connection, after_commit, times, probability,
                                        seed, created_at)
                VALUES (\(fault.method), \(fault.path), \(fault.status.map(Int32.init)), \(Int32(fault.latencyMilliseconds)),
                        \(fault.drop), \(fault.afterCommit), \(fault.times.map(Int32.init)), \(fault.probability), \(fault.seed),
                        \(clock.now))
                RETURNING *
                """).firstRow()
            try Self.announce(on: connection)
            return try Fault(row: row)
        }
        refreshAfterCommit()
        return created
    }

    /// Removes one (false: no such fault), or all (`id` nil).
    @discardableResult
    func delete(_ id: Int64?) throws -> Bool {
        let removed = try pool.withTransaction { connection -> Bool in
            let removed = try connection.query(id.map { "DELETE FROM dev_faults WHERE id = \($0)" } ?? "DELETE FROM dev_faults")
                .affectedRows > 0
            try Self.announce(on: connection)
            return removed
        }
        refreshAfterCommit()
        return removed
    }

    static func announce(on connection: PostgresConnection) throws {
        try connection.query("SELECT pg_notify(\(DevState.channel), 'faults') IS NULL AS announced")
    }

    /// The fault this request gets, if any: of those in force that match, the oldest, when
    /// its seeded draw picks this request. Its hit is counted in the database, in the same
    /// statement that decides it (one hit over `times` is never handed out, by any instance).
    /// The draw for the n-th request a fault considers is a hash of its seed and n: the same
    /// seed picks the same requests again.
    func claim(method: String, path: String) throws -> Fault? {
        let matching = faults.withLock { $0.list.filter { $0.matches(method: method, path: path) } }
        guard !matching.isEmpty else { return nil }
        return try pool.withConnection { connection -> Fault? in
            for fault in matching {
                let row = try connection.query("""
                    UPDATE dev_faults SET considered = considered + 1,
                        hits = hits + CASE WHEN probability IS NULL OR \(Self.draw("considered + 1")) < probability THEN 1 ELSE 0 END
                    WHERE id = \(fault.id) AND (times IS NULL OR hits < times)
                    RETURNING probability IS NULL OR \(Self.draw("considered")) < probability AS applied
                    """).first
                // Spent (or removed): the next oldest is in force.
                guard let row else { continue }
                return try row.decode("applied", as: Bool.self) ? fault : nil
            }
            return nil
        }
    }

    /// A number in [0, 1) from the fault's seed and `n` (SQL over the row): 52 bits of an md5.
    private static func draw(_ n: String) -> SQLQuery {
        "(('x' || substr(md5(seed::text || ':' || (\(unsafeSQL: n))::text), 1, 13))::bit(52)::bigint / 4503599627370496.0)"
    }
}
