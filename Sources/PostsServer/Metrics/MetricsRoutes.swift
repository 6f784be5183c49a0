import Dispatch
import HTTP

/// `GET /metrics` for Prometheus: the live feed's figures and the process's uptime.
enum MetricsRoutes {
    static func register(on routes: inout RouteTable, feed: ChangeFeed) {
        let started = DispatchTime.now().uptimeNanoseconds
        routes.get("/metrics", access: .open, runsOnEventLoop: true) { _, _ in
            let events = feed.statistics
            var metrics = MetricsText()
            metrics.add("events_subscribers", .gauge, help: "Open /api/events streams on this instance.",
                        value: events.subscribers)
            metrics.add("events_delivered_total", .counter, help: "Changes handed to /api/events subscribers.",
                        value: events.delivered)
            metrics.add("events_lag_seconds", .gauge,
                        help: "Time from the newest delivered change's write to its delivery (held back by long transactions).",
                        value: events.lagSeconds)
            let uptime = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            metrics.add("process_uptime_seconds", .gauge, help: "Seconds since the server started.", value: uptime)
            return Response(headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4")]), body: Array(metrics.text.utf8))
        }
    }
}
