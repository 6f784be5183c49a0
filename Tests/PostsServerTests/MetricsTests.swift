import Foundation
@testable import PostsServer
import Testing
import TestSupport

/// `GET /metrics`: API.md's names, in Prometheus text exposition.
@Suite struct MetricsTests {
    @Test func metrics_countRequestsByRoute_andShowConnectionsPoolAndUptime() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        for _ in 0..<2 { #expect(try client.get("/api/ping").status == 200) }
        #expect(try client.get("/api/health").status == 200)
        #expect(try client.get("/api/posts/12345").status == 404)
        #expect(try client.get("/no/such/route").status == 404)
        // Methods the client makes up share one label: they cannot grow the table.
        for method in ["BREW", "WHEN"] { _ = try client.send(method, "/api/ping") }
        // The access log (and so the count) follows each answer: read until all are in.
        let probe = MetricsProbe(port: app.server.port)
        #expect(try probe.wait(for: #"http_requests_total{method="other",route="unmatched",status="405"}"#) { $0 == 2 })

        let metrics = try client.get("/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type") == "text/plain; version=0.0.4")
        let lines = Set(metrics.text.split(separator: "\n").map(String.init))
        for expected in [
            "# TYPE http_requests_total counter",
            #"http_requests_total{method="GET",route="/api/ping",status="200"} 2"#,
            #"http_requests_total{method="GET",route="/api/health",status="200"} 1"#,
            #"http_requests_total{method="GET",route="/api/posts/:id",status="404"} 1"#,
            #"http_requests_total{method="other",route="unmatched",status="405"} 2"#,
            "# TYPE http_request_duration_seconds histogram",
            #"http_request_duration_seconds_bucket{route="/api/ping",le="+Inf"} 2"#,
            #"http_request_duration_seconds_count{route="/api/ping"} 2"#,
            "# TYPE http_connections_open gauge",
            "db_pool_waiting 0",
            "events_subscribers 0",
        ] {
            #expect(lines.contains(expected), "missing: \(expected)")
        }
        let buckets = metrics.text.split(separator: "\n").filter { $0.hasPrefix(#"http_request_duration_seconds_bucket{route="/api/ping""#) }
        let counts = buckets.compactMap { Int($0.split(separator: " ").last ?? "") }
        #expect(counts.count == RequestMetrics.buckets.count + 1 && counts == counts.sorted(), "buckets are cumulative")
        // In use and idle: how many depends on the requests in flight at the moment.
        for state in ["in_use", "idle"] {
            #expect(lines.contains { $0.hasPrefix(#"db_pool_connections{state=""# + state + #""} "#) })
        }
        let open = try #require(try probe.value("http_connections_open"))
        #expect(open >= 2)
        #expect(try #require(try probe.value("process_uptime_seconds")) > 0)
    }
}
