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

    static func register(on routes: inout RouteTable, pool: ConnectionPool, mail: @escaping @Sendable () -> MailState,
                         storageFailing: @escaping @Sendable () -> Bool) {
        routes.get("/api/ping", access: .open, runsOnEventLoop: true) { _, _ in pong }
        routes.get("/api/health", access: .open) { _, _ in
            _ = try pool.withConnection { try $0.query("SELECT 1 AS ok") }
            let storage = storageFailing() ? "failing" : "ok"
            return Response.json(Array(#"{"status":"success","database":"ok","mail":"\#(mail().rawValue)","storage":"\#(storage)"}"#.utf8))
        }
    }
}
