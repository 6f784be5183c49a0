import HTTP
import Postgres

/// `GET /api/ping` (proof of life, no database) and `GET /api/health` (the database too).
enum HealthRoutes {
    private static let pong = Response.json(Array(#"{"status":"success","message":"pong"}"#.utf8))
    private static let healthy = Response.json(Array(#"{"status":"success","database":"ok"}"#.utf8))

    static func register(on routes: inout RouteTable, pool: ConnectionPool) {
        routes.get("/api/ping", access: .open, runsOnEventLoop: true) { _, _ in pong }
        routes.get("/api/health", access: .open) { _, _ in
            _ = try pool.withConnection { try $0.query("SELECT 1 AS ok") }
            return healthy
        }
    }
}
