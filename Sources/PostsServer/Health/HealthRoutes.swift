import HTTP
import Postgres

/// `GET /api/ping` (proof of life, no database) and `GET /api/health` (the database too,
/// and the mailer's and the object store's states, which never decide the status: only
/// the database does).
enum HealthRoutes {
    /// API.md: `not_configured` without `SMTP_URL`; with it `ok`, or `failing` when this
    /// instance's last try failed.
    enum MailState: String, Sendable {
        case notConfigured = "not_configured"
        case ok
        case failing
    }

    private static let pong = Response.json(Array(#"{"status":"success","message":"pong"}"#.utf8))

    /// `push`: each way of pushing (the webhook, then APNs, FCM, Web Push) and its state:
    /// `not_configured`, `ok`, or `failing` while its last try failed.
    static func register(on routes: inout RouteTable, pool: ConnectionPool, mail: @escaping @Sendable () -> MailState,
                         storageFailing: @escaping @Sendable () -> Bool, push: @escaping @Sendable () -> [(String, String)]) {
        routes.get("/api/ping", access: .open, runsOnEventLoop: true) { _, _ in pong }
        routes.get("/api/health", access: .open) { _, _ in
            // The primary decides the status; a replica down only moves reads to the others.
            _ = try pool.withConnection { try $0.query("SELECT 1 AS ok") }
            var health = JSONObject.success()
            health.add("database", "ok")
            health.add("mail", mail().rawValue)
            health.add("storage", storageFailing() ? "failing" : "ok")
            var pushStates = JSONObject()
            for (name, state) in push() { pushStates.add(name, state) }
            health.add("push", pushStates)
            health.add("replicas", (pool.replicas?.statuses ?? []).map(replicaJSON))
            return health.response()
        }
    }

    /// `{"name","state","lag_ms"}` (API.md "Many databases"); `lag_ms` null while it is down.
    static func replicaJSON(_ status: ReplicaSet.Status) -> JSONObject {
        var replica = JSONObject()
        replica.add("name", status.name)
        replica.add("state", status.state.rawValue)
        replica.add("lag_ms", status.lag.map { Int64($0.milliseconds) })
        return replica
    }
}
