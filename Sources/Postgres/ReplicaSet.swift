import CLibPQ
import Dispatch
import Locking
import Synchronization

/// The streaming replicas reads may go to, each with its own pool, and what the monitor
/// last measured of them (`ReplicaMonitor`). A replica takes reads while it is `ok`:
/// reachable and no further behind the primary than `maxLag`; a read that needs a write it
/// has not replayed yet, or finds every replica `lagging` or `down`, goes to the primary.
public final class ReplicaSet: Sendable {
    public enum State: String, Sendable {
        case ok, lagging, down
    }

    public struct Status: Sendable, Equatable {
        public let name: String
        public let state: State
        /// How far behind the primary's log it is, in time; nil while it is down.
        public let lag: Duration?
        /// Reads it has served.
        public let reads: Int
        /// The log position it had replayed when last measured.
        public let replayed: LogSequenceNumber
    }

    public final class Replica: Sendable {
        /// `host:port/database` (no credentials): what health, metrics and logs call it.
        public let name: String
        let pool: ConnectionPool
        /// True while it is `ok`: read on every read, so an atomic beside the measurement.
        let takesReads = Atomic<Bool>(false)
        /// The log position it has replayed, as last measured.
        let replayed = Atomic<UInt64>(0)
        /// When it was last measured (`DispatchTime` nanoseconds): a measurement too old says
        /// nothing of its lag now (a monitor held up by an unreachable primary).
        let measuredAt = Atomic<UInt64>(0)
        let reads = Atomic<Int>(0)
        let measurement = ParkingLock<(state: State, lag: Duration?)>((.down, nil))

        init(pool: ConnectionPool) {
            self.pool = pool
            name = Self.name(of: pool.configuration.conninfo)
        }

        /// The state the monitor measured (or a failed read found).
        func record(_ state: State, lag: Duration?, replayed position: LogSequenceNumber?) {
            if let position { replayed.store(position.value, ordering: .relaxed) }
            measuredAt.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
            measurement.withLock { $0 = (state, lag) }
            if state != .down { pool.markReachable() }
            takesReads.store(state == .ok, ordering: .releasing)
        }

        /// libpq reads the connection string (keywords or URL); what is left out of the name
        /// is everything that may be secret.
        static func name(of conninfo: String) -> String {
            var error: UnsafeMutablePointer<CChar>?
            guard let options = PQconninfoParse(conninfo, &error) else {
                if let error { PQfreemem(error) }
                return "replica"
            }
            defer { PQconninfoFree(options) }
            var fields: [String: String] = [:]
            var option = options
            while let keyword = option.pointee.keyword {
                if let value = option.pointee.val { fields[String(cString: keyword)] = String(cString: value) }
                option += 1
            }
            let host = fields["host"] ?? fields["hostaddr"] ?? "localhost"
            return "\(host):\(fields["port"] ?? "5432")/\(fields["dbname"] ?? fields["user"] ?? "")"
        }
    }

    public let replicas: [Replica]
    public let maxLag: Duration
    /// Reads that went to the primary: none of the replicas qualified, or the one chosen failed.
    let primaryReads = Atomic<Int>(0)
    public var readsOnPrimary: Int { primaryReads.load(ordering: .relaxed) }
    private let turn = Atomic<Int>(0)

    /// One pool per replica, each of `configuration`'s size and settings but its conninfo.
    public init(conninfos: [String], configuration: ConnectionPool.Configuration, maxLag: Duration) {
        replicas = conninfos.map { conninfo in
            var replica = configuration
            replica.conninfo = conninfo
            // A replica is PostgreSQL itself: its sessions keep their statements.
            replica.behindTransactionPooler = false
            // One whose connections are all busy hands the read to the primary at once.
            replica.checkoutTimeout = .milliseconds(100)
            return Replica(pool: ConnectionPool(replica))
        }
        self.maxLag = maxLag
        measurementTrusted = max(maxLag, .seconds(2))
        staleAfter = UInt64(measurementTrusted.nanoseconds)
    }

    /// How long a replica's last measurement is trusted: a replica that stopped replaying
    /// just after it may take reads this long before the monitor sees it.
    public let measurementTrusted: Duration
    /// The same, in nanoseconds.
    private let staleAfter: UInt64

    /// The next replica in turn that takes reads and has replayed `floor`; nil: the primary.
    func choose(floor: LogSequenceNumber?) -> Replica? {
        guard !replicas.isEmpty else { return nil }
        let now = DispatchTime.now().uptimeNanoseconds
        let start = turn.wrappingAdd(1, ordering: .relaxed).oldValue
        for offset in 0..<replicas.count {
            let replica = replicas[(start &+ offset) % replicas.count]
            guard replica.takesReads.load(ordering: .acquiring),
                  now &- replica.measuredAt.load(ordering: .relaxed) < staleAfter else { continue }
            if let floor, replica.replayed.load(ordering: .relaxed) < floor.value { continue }
            return replica
        }
        return nil
    }

    public var statuses: [Status] {
        replicas.map { replica in
            let (state, lag) = replica.measurement.withLock { $0 }
            return Status(name: replica.name, state: state, lag: lag, reads: replica.reads.load(ordering: .relaxed),
                          replayed: LogSequenceNumber(value: replica.replayed.load(ordering: .relaxed)))
        }
    }

    public func close() {
        replicas.forEach { $0.pool.close() }
    }
}
