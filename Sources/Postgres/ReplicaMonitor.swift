import Foundation
import Logging
import Synchronization

/// Measures the replicas several times a second, on a thread of its own: where the primary's
/// log is, how far each replica has replayed it, and from that how long ago the primary
/// wrote what a replica has not replayed yet (its lag, in time). `ReplicaSet.choose` acts
/// on what it last measured.
///
/// Why lag from the primary's positions rather than `now() - pg_last_xact_replay_timestamp()`:
/// that timestamp is the last replayed commit's, so a replica of a quiet database would look
/// minutes behind a moment after the first write it has not replayed yet, and take no reads
/// for nothing. Here a replica is as far behind as the oldest primary position it lacks,
/// of those the primary had flushed (what it can send: with `synchronous_commit = off`
/// the insert position runs ahead of it, in a quiet database for as long as it stays quiet).
public final class ReplicaMonitor: Sendable {
    private let replicas: ReplicaSet
    private let primary: ConnectionPool
    private let interval: Duration
    private let logger: Logger
    private let running = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// `primary`: a connection of the monitor's own to the primary (size 1), so that its
    /// measurements never wait behind requests.
    public init(replicas: ReplicaSet, primary: ConnectionPool.Configuration, interval: Duration = .milliseconds(100),
                logger: Logger) {
        self.replicas = replicas
        var own = primary
        own.size = 1
        own.checkoutTimeout = .seconds(1)
        own.connectTimeout = .seconds(1)
        self.primary = ConnectionPool(own)
        self.interval = interval
        self.logger = logger
    }

    /// Measures once at once (so that replicas take reads from the first request), then
    /// keeps measuring until `stop`.
    public func start() {
        guard !replicas.replicas.isEmpty else { return }
        running.store(true, ordering: .releasing)
        let probes = ReplicaProbes(count: replicas.replicas.count)
        measure(probes)
        let thread = Thread { [self] in
            while running.load(ordering: .acquiring) {
                _ = wake.wait(timeout: .now() + .nanoseconds(Int(interval.nanoseconds)))
                guard running.load(ordering: .acquiring) else { break }
                measure(probes)
            }
            probes.closeAll()
            primary.close()
            finished.signal()
        }
        thread.name = "replica-monitor"
        thread.start()
    }

    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        _ = finished.wait(timeout: .now() + 5)
    }

    private func measure(_ probes: ReplicaProbes) {
        let now = ContinuousClock.now
        if let position = try? primary.withConnection({
            try LogSequenceNumber($0.query("SELECT pg_current_wal_flush_lsn()::text AS position").firstRow().decode("position") as String)
        }) ?? nil {
            probes.history.record(position, at: now)
        }
        probes.history.forget(before: now - replicas.maxLag * 2 - .seconds(1))
        for (index, replica) in replicas.replicas.enumerated() {
            let before = replica.measurement.withLock { $0.state }
            let state: ReplicaSet.State
            do {
                let replayed = try probes.replayed(by: index, conninfo: replica.pool.configuration.conninfo, now: now)
                // Behind every position the monitor has seen (a replica far behind at start, or
                // one stuck past the history kept): at least that far, and not to be read.
                let (lag, atLeast) = probes.history.lag(of: replayed, now: now)
                state = atLeast || lag > replicas.maxLag ? .lagging : .ok
                replica.record(state, lag: lag, replayed: replayed)
            } catch {
                state = .down
                replica.record(.down, lag: nil, replayed: nil)
                if before != .down { logger.warning("replica unreachable: reads go elsewhere", metadata: ["replica": "\(replica.name)", "error": "\(error)"]) }
            }
            if before != state, state != .down {
                logger.info("replica \(state == .ok ? "takes reads" : "lags: reads go elsewhere")",
                            metadata: ["replica": "\(replica.name)", "state": "\(state.rawValue)"])
            }
        }
    }
}

/// The monitor's own connection to each replica, kept between measurements (one that failed
/// is tried again after a second, not at every measurement), and the primary's positions.
/// Unchecked: `start` measures with it once and then hands it to the monitor's thread, the
/// only one to touch it after.
private final class ReplicaProbes: @unchecked Sendable {
    var history = PrimaryHistory()
    private var connections: [PostgresConnection?]
    private var retryAfter: [ContinuousClock.Instant?]

    init(count: Int) {
        connections = Array(repeating: nil, count: count)
        retryAfter = Array(repeating: nil, count: count)
    }

    func replayed(by index: Int, conninfo: String, now: ContinuousClock.Instant) throws -> LogSequenceNumber {
        if let retry = retryAfter[index], now < retry {
            throw PostgresError(.connectionFailed, details: "unreachable a moment ago")
        }
        do {
            let connection = try connections[index] ?? PostgresConnection(
                conninfo: conninfo, connectTimeout: .seconds(1), statementTimeout: .seconds(1), queryTimeout: .seconds(2))
            connections[index] = connection
            // A replica that was promoted no longer follows the primary: what it has may
            // have parted from it, so it takes no reads (down, and logged).
            let row = try connection.query(
                "SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed").firstRow()
            guard try row.decode("standby", as: Bool.self) else {
                throw PostgresError(.server, details: "not a standby (promoted?): it takes no reads")
            }
            let text: String = try row.decode("replayed")
            guard let position = LogSequenceNumber(text) else {
                throw PostgresError(.server, details: "unreadable log position \(text)")
            }
            retryAfter[index] = nil
            return position
        } catch {
            connections[index]?.close()
            connections[index] = nil
            retryAfter[index] = now + .seconds(1)
            throw error
        }
    }

    func closeAll() {
        connections.forEach { $0?.close() }
        connections = connections.map { _ in nil }
    }
}
