import HTTP

/// `GET /api/ping`: proof of life that touches nothing else.
enum HealthRoutes {
    private static let pong = Response.json(Array(#"{"status":"success","message":"pong"}"#.utf8))

    static func register(on router: inout Router) {
        router.get("/api/ping") { _, _ in pong }
    }
}
