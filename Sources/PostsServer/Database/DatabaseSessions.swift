import Logging
import Postgres

/// How the server's pools open their sessions.
enum DatabaseSessions {
    /// A pool of `size` connections whose sessions run without JIT compilation. The server's
    /// statements are short, but a write that records its events is one large statement
    /// whose row estimates (a CTE's are guesses) can pass `jit_above_cost`: compiling it
    /// then took 850 ms of a 950 ms statement (a demo seed of 2,000 rows), where running it
    /// takes a tenth of that.
    ///
    /// Behind a transaction-mode pooler no session setting survives a transaction: there
    /// `jit` and `statement_timeout` are the role's or the pooler's (README "Scaling out").
    static func pool(conninfo: String, size: Int, pooler: DatabaseTopology.Pooler = .none) -> ConnectionPool {
        ConnectionPool(configuration(conninfo: conninfo, size: size, pooler: pooler))
    }

    /// The primary's pool of the topology, with its replicas (each a pool of the same size,
    /// their sessions set the same way) and the monitor that measures them; no monitor
    /// without replicas.
    static func primary(conninfo: String, size: Int, topology: DatabaseTopology,
                        logger: Logger) -> (ConnectionPool, ReplicaMonitor?) {
        let primary = configuration(conninfo: conninfo, size: size, pooler: topology.pooler)
        guard !topology.replicaURLs.isEmpty else { return (ConnectionPool(primary), nil) }
        let replicas = ReplicaSet(conninfos: topology.replicaURLs, configuration: primary, maxLag: topology.replicaMaxLag)
        return (ConnectionPool(primary, replicas: replicas), ReplicaMonitor(replicas: replicas, primary: primary, logger: logger))
    }

    private static func configuration(conninfo: String, size: Int, pooler: DatabaseTopology.Pooler) -> ConnectionPool.Configuration {
        var configuration = ConnectionPool.Configuration(conninfo: conninfo, size: size)
        configuration.sessionSettings = [("jit", "off")]
        configuration.behindTransactionPooler = pooler == .transaction
        return configuration
    }

    /// Behind a transaction-mode pooler the server sets nothing for a session: says so at
    /// start when the pooled sessions have no statement timeout (a statement that hangs is
    /// then cut only by the client side, which counts the connection as lost) or run JIT.
    static func checkPooledSessions(_ pool: ConnectionPool, logger: Logger) {
        guard pool.configuration.behindTransactionPooler else { return }
        let settings = try? pool.withConnection { connection -> (String, String) in
            let row = try connection.query(
                "SELECT current_setting('statement_timeout') AS timeout, current_setting('jit') AS jit").firstRow()
            return (try row.decode("timeout"), try row.decode("jit"))
        }
        guard let (timeout, jit) = settings, timeout == "0" || jit == "on" else { return }
        logger.warning("""
            the pooled sessions run with statement_timeout = \(timeout) and jit = \(jit): behind a pooler set them for the \
            role (ALTER ROLE … SET statement_timeout = '3s'; ALTER ROLE … SET jit = off), see README "Scaling out"
            """)
    }
}
