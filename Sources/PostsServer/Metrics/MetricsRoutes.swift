import Dispatch
import HTTP
import Postgres

/// `GET /metrics` for Prometheus: requests and their latency by route, open connections,
/// the pool, the live feed, the job queue, mail, push, uptime.
enum MetricsRoutes {
    /// What the route reads that exists only once the server does.
    struct Sources: Sendable {
        let requests: RequestMetrics
        let pool: ConnectionPool
        let feed: ChangeFeed
        /// This instance's job runner: what it did, and the queue's depth (the database's,
        /// whichever instance runs the jobs).
        let jobs: JobRunner
        /// The mail queue's depth: the outbox's, whoever delivers it.
        let outbox: Outbox
        let images: ImageCounters
        let storage: StorageMetrics
        /// Rows the pruner removed, by rule.
        let upkeep: UpkeepPruner
        let push: PushSources
        /// With `FEDERATION=on`.
        var federation: FederationMetrics?
        /// The coalesced writes' batches and the writes in them, by kind (`WriteCoalescer`).
        var writeBatches: [(kind: String, counts: @Sendable () -> (batches: Int, writes: Int))] = []
        let openConnections: @Sendable () -> Int
    }

    static func register(on routes: inout RouteTable, sources: Sources) {
        let started = DispatchTime.now().uptimeNanoseconds
        routes.get("/metrics", access: .open) { _, _ in
            var metrics = MetricsText()
            let requests = sources.requests.snapshot
            metrics.describe("http_requests_total", .counter, help: "Requests answered, by method, route pattern and status.")
            for (key, count) in requests.requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
                metrics.sample("http_requests_total", [("method", key.method), ("route", key.route), ("status", String(key.status))],
                               Double(count))
            }
            metrics.describe("http_request_duration_seconds", .histogram, help: "Time from a request's head to its answer, by route pattern.")
            for (route, histogram) in requests.durations.sorted(by: { $0.key < $1.key }) {
                metrics.histogram("http_request_duration_seconds", label: ("route", route), histogram)
            }
            metrics.add("http_connections_open", .gauge, help: "Open client connections (event streams included).",
                        value: sources.openConnections())
            let pool = sources.pool.statistics
            metrics.describe("db_pool_connections", .gauge, help: "Pooled database connections, by state.")
            metrics.sample("db_pool_connections", [("state", "in_use")], Double(pool.inUse))
            metrics.sample("db_pool_connections", [("state", "idle")], Double(pool.idle))
            metrics.add("db_pool_waiting", .gauge, help: "Requests waiting for a pooled connection.", value: pool.waiting)
            addReplicas(to: &metrics, replicas: sources.pool.replicas)
            let events = sources.feed.statistics
            metrics.add("events_subscribers", .gauge, help: "Open /api/events streams on this instance.",
                        value: events.subscribers)
            metrics.add("events_delivered_total", .counter, help: "Changes handed to /api/events subscribers.",
                        value: events.delivered)
            metrics.add("events_lag_seconds", .gauge,
                        help: "Time from the write of the oldest change not yet delivered (held back by long transactions) to now.",
                        value: events.lagSeconds)
            let depths = try? sources.jobs.queue.depths()
            addJobs(to: &metrics, sources: sources, depths: depths)
            addMail(to: &metrics, sources: sources)
            addPush(to: &metrics, sources: sources, depths: depths)
            addFederation(to: &metrics, federation: sources.federation)
            addWriteBatches(to: &metrics, sources.writeBatches)
            addImages(to: &metrics, counters: sources.images.snapshot)
            addStorage(to: &metrics, snapshot: sources.storage.snapshot)
            metrics.describe("upkeep_removed_total", .counter,
                             help: "Rows the pruner removed on this instance (past a retention or a cap), by rule.")
            let removed = sources.upkeep.counters.removed
            for rule in sources.upkeep.rules.map(\.name) + UpkeepPruner.caps.map(\.name) {
                metrics.sample("upkeep_removed_total", [("rule", rule)], Double(removed[rule] ?? 0))
            }
            let uptime = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            metrics.add("process_uptime_seconds", .gauge, help: "Seconds since the server started.", value: uptime)
            return Response(headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4")]), body: Array(metrics.text.utf8))
        }
    }

    private static func addWriteBatches(to metrics: inout MetricsText,
                                        _ kinds: [(kind: String, counts: @Sendable () -> (batches: Int, writes: Int))]) {
        let counts = kinds.map { ($0.kind, $0.counts()) }
        metrics.describe("write_batches_total", .counter, help: "Statements that ran a batch of requests' writes, by kind.")
        for (kind, count) in counts { metrics.sample("write_batches_total", [("kind", kind)], Double(count.batches)) }
        metrics.describe("write_batched_total", .counter, help: "Requests' writes those statements ran, by kind.")
        for (kind, count) in counts { metrics.sample("write_batched_total", [("kind", kind)], Double(count.writes)) }
    }
}
