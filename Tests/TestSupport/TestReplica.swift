import Foundation
import Postgres
import PostsServer

/// A streaming replica of a test cluster: a base backup (`pg_basebackup -R`) started in a
/// folder of its own, following the cluster as a hot standby. Stopped at process exit with
/// the clusters.
public struct TestReplica: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let primary: LocalCluster
    public let standby: LocalCluster

    /// A replica of `primary` (a cluster of the test's own: pausing its replay or stopping it
    /// must not touch anyone else's), started and streaming.
    public static func start(of primary: LocalCluster) throws -> TestReplica {
        let directory = URL(fileURLWithPath: ScratchDirectory.path("standby"))
        let standby = try primary.makeStandby(in: directory)
        ClusterCleanup.register(standby)
        do {
            try standby.start()
        } catch {
            let log = (try? String(contentsOf: standby.logFile, encoding: .utf8)) ?? ""
            throw Failure(description: "\(error)\n\(log.suffix(3000))")
        }
        return TestReplica(primary: primary, standby: standby)
    }

    /// `database` of the primary (a connection string of it), as the replica serves it.
    public func conninfo(of database: String) -> String {
        let name = database.split(separator: " ").first { $0.hasPrefix("dbname=") }.map { String($0.dropFirst(7)) } ?? "postgres"
        return standby.conninfo(database: name)
    }

    /// Runs SQL on the replica's `postgres` database (replay control, mostly).
    public func run(_ sql: String) throws {
        let connection = try PostgresConnection(conninfo: standby.conninfo(), queryTimeout: .seconds(10))
        defer { connection.close() }
        try connection.execute(unsafeSQL: sql)
    }

    /// Pauses replay (`pg_wal_replay_pause()`) and waits until it has paused: the request
    /// alone leaves it replaying until its next check.
    public func pauseReplay(timeout: Duration = .seconds(30)) throws {
        try run("SELECT pg_wal_replay_pause()")
        let paused = eventually(timeout: timeout) {
            guard let connection = try? PostgresConnection(conninfo: standby.conninfo(), queryTimeout: .seconds(10)) else { return false }
            defer { connection.close() }
            let state: String? = try? connection.query("SELECT pg_get_wal_replay_pause_state() AS state").firstRow().decode("state")
            return state == "paused"
        }
        guard paused else { throw Failure(description: "the replica's replay did not pause in \(timeout)") }
    }

    /// Where the primary's log is flushed to, after a commit that flushes it (the test
    /// clusters commit asynchronously): past everything committed before the call.
    public func primaryPosition() throws -> LogSequenceNumber {
        let connection = try PostgresConnection(conninfo: primary.conninfo(), queryTimeout: .seconds(10))
        defer { connection.close() }
        // (A commit flushes only when its transaction wrote something: txid_current() alone would not.)
        try connection.execute(unsafeSQL: "SET synchronous_commit = on; CREATE TABLE IF NOT EXISTS replica_test_flushes (at timestamptz); INSERT INTO replica_test_flushes VALUES (now())")
        let text: String = try connection.query("SELECT pg_current_wal_flush_lsn()::text AS at").firstRow().decode("at")
        return try LogSequenceNumber(text) ?? { throw Failure(description: "unreadable position \(text)") }()
    }

    /// Until the replica has replayed everything the primary has written so far; returns that position.
    @discardableResult
    public func waitUntilCaughtUp(timeout: Duration = .seconds(30)) throws -> LogSequenceNumber {
        let position = try primaryPosition()
        let target = position.description
        let caughtUp = eventually(timeout: timeout) {
            guard let connection = try? PostgresConnection(conninfo: standby.conninfo(), queryTimeout: .seconds(10)) else { return false }
            defer { connection.close() }
            let replayed: Bool? = try? connection.query("SELECT coalesce(pg_last_wal_replay_lsn() >= \(target)::pg_lsn, false) AS done")
                .firstRow().decode("done")
            return replayed == true
        }
        guard caughtUp else { throw Failure(description: "the replica did not replay up to \(target) in \(timeout)") }
        return position
    }
}

/// A primary of the test's own, one replica of it, and `instances` servers reading from it.
public struct ReplicaDeployment: Sendable {
    public let replica: TestReplica
    public let apps: [Application]
    public var replicaName: String { "\(replica.standby.socketDirectory):\(replica.standby.port)/\(database)" }
    public let database: String

    public static func start(instances: Int, maxLag: Duration,
                             configure: (inout Configuration) -> Void = { _ in }) throws -> ReplicaDeployment {
        let cluster = try TestDatabase.cluster(.own)
        let conninfo = try TestDatabase.makeDatabase(on: cluster)
        let replica = try TestReplica.start(of: cluster)
        try replica.waitUntilCaughtUp()
        let apps = try (0..<instances).map { _ in
            try TestApplication.start(conninfo: conninfo) {
                $0.database.replicaURLs = [replica.conninfo(of: conninfo)]
                $0.database.replicaMaxLag = maxLag
                configure(&$0)
            }
        }
        let database = conninfo.split(separator: " ").first { $0.hasPrefix("dbname=") }.map { String($0.dropFirst(7)) } ?? ""
        return ReplicaDeployment(replica: replica, apps: apps, database: database)
    }

    public func url(_ index: Int) -> URL { URL(string: "http://127.0.0.1:\(apps[index].server.port)")! }

    public func stop() { apps.forEach { $0.stop() } }

    /// Until the replica has all the primary has, and every server has measured it so.
    public func waitUntilMeasuredCaughtUp() throws -> Bool {
        let position = try replica.waitUntilCaughtUp()
        return try apps.allSatisfy { app in
            try MetricsProbe(port: app.server.port)
                .wait(for: "db_replica_replayed_bytes{replica=\"\(replicaName)\"}") { $0 >= Double(position.value) }
        }
    }

    /// `/api/health`'s replicas.
    public func replicas(on index: Int) throws -> [[String: Any]] {
        try APIClient(port: apps[index].server.port).get("/api/health").json["replicas"] as? [[String: Any]] ?? []
    }

    public func readsServedBy(_ database: String, on index: Int) throws -> Double {
        try MetricsProbe(port: apps[index].server.port).value("db_reads_total{database=\"\(database)\"}") ?? 0
    }
}
