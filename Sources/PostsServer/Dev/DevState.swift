import Foundation
import Logging
import Postgres
import Synchronization

/// What an app's test suite sets for every instance on the database at once (API.md "For
/// apps' test suites"): the clock (`DevClock`), the faults (`DevFaults`) and restores of
/// snapshots (`DevSnapshots`: each instance's caches and streams, `RestoreObservers`).
/// Trust mode only: a token-mode server never starts this, so it never reads them.
///
/// Each change is saved and announced on `channel` in one statement; the instance that made
/// it reads it back at once, the others when the announcement arrives here: one dedicated
/// connection (LISTEN holds its session: never through a transaction-mode pooler) that reads
/// the whole state again on each announcement, and on each (re)connect, so that one missed
/// while the connection was down is never missed for good.
///
/// Reads are numbered as they begin (`ticket()`) and one is applied only over an earlier
/// one: a read that began after a change committed sees it, so the state in force never
/// goes back. (Without that, a read the previous announcement started could land after the
/// instance's own next change and undo it here until the next announcement: a fault
/// created and at once not in force.)
final class DevState: @unchecked Sendable {
    static let channel = "posts_server_dev"
    private static let reads = Atomic<UInt64>(0)

    /// The number of a read of the state about to begin: greater than every earlier one's.
    static func ticket() -> UInt64 { reads.add(1, ordering: .relaxed).newValue }

    private let conninfo: String
    private let clock: ServerClock
    private let faults: DevFaults
    private let restores: RestoreObservers
    private let logger: Logger
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// Set once the state was first read: a server starts serving with it in force.
    private let loaded = DispatchSemaphore(value: 0)
    /// The listener thread's own: the state was read once.
    private var hasRead = false

    init(conninfo: String, clock: ServerClock, faults: DevFaults, restores: RestoreObservers, logger: Logger) {
        self.conninfo = conninfo
        self.clock = clock
        self.faults = faults
        self.restores = restores
        self.logger = logger
    }

    /// Starts following, and waits (at most `timeout`) for the state to be read once.
    func start(timeout: Duration = .seconds(5)) {
        running.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            var connection: PostgresConnection?
            var outageLogged = false
            while running.load(ordering: .acquiring) {
                do {
                    if connection == nil {
                        let fresh = try PostgresConnection(conninfo: conninfo, connectTimeout: .seconds(2))
                        _ = try fresh.query("SET application_name = 'posts-server dev state'")
                        try fresh.listen(unsafeChannel: Self.channel)
                        connection = fresh
                        try read(on: fresh)
                        if outageLogged { logger.info("dev state listener reconnected") }
                        outageLogged = false
                    }
                    if let connection, try connection.awaitNotifications(timeout: .milliseconds(250)) > 0 {
                        try read(on: connection)
                    }
                } catch {
                    if !outageLogged {
                        logger.warning("dev state listener lost its database connection; reconnecting",
                                       metadata: ["error": "\(error)"])
                        outageLogged = true
                    }
                    connection?.close()
                    connection = nil
                    usleep(200_000)
                }
            }
            connection?.close()
            finished.signal()
        }
        thread.name = "dev-state"
        thread.start()
        _ = loaded.wait(timeout: .now() + .milliseconds(Int(timeout.milliseconds)))
    }

    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        _ = finished.wait(timeout: .now() + 5)
    }

    /// Reads the whole state; the first time, also where the count of restores stands (those
    /// before this instance started are none of its business), and then says it is loaded.
    private func read(on connection: PostgresConnection) throws {
        let ticket = Self.ticket()
        clock.apply(try DevClock.read(on: connection), read: ticket)
        faults.replace(with: try DevFaults.read(on: connection), read: ticket)
        let restoreCount = try Self.restoreCount(on: connection)
        if hasRead {
            restores.fire(generation: restoreCount)
        } else {
            restores.start(at: restoreCount)
            hasRead = true
            loaded.signal()
        }
    }

    /// How many restores the database has seen.
    private static func restoreCount(on connection: PostgresConnection) throws -> Int64 {
        try connection.query("SELECT coalesce((SELECT generation FROM dev_snapshot_restores), 0) AS n").firstRow().decode("n")
    }
}
