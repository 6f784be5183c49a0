import Postgres

/// The replicas' part of `/metrics` (API.md "Many databases"): each replica's state and lag
/// as last measured, the reads it served, and the reads that went to the primary instead.
/// Empty without replicas.
extension MetricsRoutes {
    static func addReplicas(to metrics: inout MetricsText, replicas: ReplicaSet?) {
        guard let replicas else { return }
        let statuses = replicas.statuses
        metrics.describe("db_replica_up", .gauge, help: "1 while the replica takes reads (reachable, within REPLICA_MAX_LAG).")
        for status in statuses {
            metrics.sample("db_replica_up", [("replica", status.name)], status.state == .ok ? 1 : 0)
        }
        metrics.describe("db_replica_state", .gauge, help: "The replica's state (ok, lagging, down): 1 for the current one.")
        for status in statuses {
            for state in [ReplicaSet.State.ok, .lagging, .down] {
                metrics.sample("db_replica_state", [("replica", status.name), ("state", state.rawValue)], status.state == state ? 1 : 0)
            }
        }
        metrics.describe("db_replica_lag_seconds", .gauge, help: "How long ago the primary wrote what the replica has not replayed yet.")
        for status in statuses {
            guard let lag = status.lag else { continue }
            metrics.sample("db_replica_lag_seconds", [("replica", status.name)], Double(lag.milliseconds) / 1000)
        }
        metrics.describe("db_replica_replayed_bytes", .gauge,
                         help: "The log position the replica had replayed when last measured, in bytes (pg_last_wal_replay_lsn).")
        for status in statuses {
            metrics.sample("db_replica_replayed_bytes", [("replica", status.name)], Double(status.replayed.value))
        }
        metrics.describe("db_reads_total", .counter, help: "Reads that could go to a replica, by the database that served them.")
        for status in statuses {
            metrics.sample("db_reads_total", [("database", status.name)], Double(status.reads))
        }
        metrics.sample("db_reads_total", [("database", "primary")], Double(replicas.readsOnPrimary))
    }
}
