/// The push sender's part of `/metrics` (API.md "Push"): this instance's deliveries and
/// failures (its `push.deliver` jobs), and what waits on all instances together.
extension MetricsRoutes {
    static func addPush(to metrics: inout MetricsText, sources: Sources, depths: [String: JobQueue.Depth]?) {
        let counters = sources.jobs.statistics.counters(of: .push)
        metrics.add("push_sent_total", .counter, help: "Pushes this instance posted to PUSH_WEBHOOK_URL and saw a 2xx for.",
                    value: counters.done)
        metrics.add("push_failed_total", .counter, help: "Pushes this instance gave up on (undelivered at an hour old).",
                    value: counters.died)
        // Read from the database; while it is away this one is left out rather than
        // reported as zero.
        guard let depths else { return }
        metrics.add("push_queue_depth", .gauge, help: "Pushes waiting to be delivered, neither delivered nor failed.",
                    value: depths[JobKind.push.name]?.pending ?? 0)
    }
}
