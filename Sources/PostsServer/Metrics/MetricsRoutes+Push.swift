/// The push sender's part of `/metrics` (API.md "Push"): this instance's deliveries and
/// failures, and what waits in `push_outbox` on all instances together.
extension MetricsRoutes {
    static func addPush(to metrics: inout MetricsText, sources: Sources) {
        let counters = sources.pushSender?.statistics ?? PushSender.Counters()
        metrics.add("push_sent_total", .counter, help: "Pushes this instance posted to PUSH_WEBHOOK_URL and saw a 2xx for.",
                    value: counters.sent)
        metrics.add("push_failed_total", .counter, help: "Pushes this instance gave up on (undelivered at an hour old).",
                    value: counters.failed)
        // Read from the database; while it is away this one is left out rather than
        // reported as zero.
        guard let depth = try? sources.pushQueue.depth() else { return }
        metrics.add("push_queue_depth", .gauge, help: "Pushes waiting in push_outbox, neither delivered nor failed.", value: depth)
    }
}
