import Postgres

/// How the server's pools open their sessions.
enum DatabaseSessions {
    /// A pool of `size` connections whose sessions run without JIT compilation. The server's
    /// statements are short, but a write that records its events is one large statement
    /// whose row estimates (a CTE's are guesses) can pass `jit_above_cost`: compiling it
    /// then took 850 ms of a 950 ms statement (a demo seed of 2,000 rows), where running it
    /// takes a tenth of that.
    static func pool(conninfo: String, size: Int) -> ConnectionPool {
        var configuration = ConnectionPool.Configuration(conninfo: conninfo, size: size)
        configuration.sessionSettings = [("jit", "off")]
        return ConnectionPool(configuration)
    }
}
