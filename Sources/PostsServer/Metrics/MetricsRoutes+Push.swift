/// The pushes' part of `/metrics` (API.md "Push" and "Push to every device"), by provider:
/// the webhook's deliveries and failures (this instance's `push.deliver` jobs) and the
/// direct services' (`PushMetrics`), and what waits on all instances together.
extension MetricsRoutes {
    struct PushSources: Sendable {
        /// Whether `PUSH_WEBHOOK_URL` is set.
        let webhook: Bool
        let direct: DirectPush?
    }

    static func addPush(to metrics: inout MetricsText, sources: Sources, depths: [String: JobQueue.Depth]?) {
        // The webhook's are always there (zero while it is not configured), as before there
        // were providers.
        let webhook = sources.jobs.statistics.counters(of: .push)
        let direct = sources.push.direct.map { ($0.platforms, $0.metrics.snapshot) }
        do {
            metrics.describe("push_sent_total", .counter, help: "Pushes this instance delivered, by provider "
                + "(webhook: a 2xx from PUSH_WEBHOOK_URL; apns, fcm, webpush: accepted by the service).")
            metrics.sample("push_sent_total", [("provider", "webhook")], Double(sources.push.webhook ? webhook.done : 0))
            for platform in direct?.0 ?? [] {
                metrics.sample("push_sent_total", [("provider", platform.rawValue)], Double(direct?.1.sent[platform] ?? 0))
            }
            metrics.describe("push_failed_total", .counter, help: "Pushes that failed, by provider and reason (webhook: "
                + "given up on at an hour old; the services: each try answered with a removed token, a refusal, or unavailable).")
            metrics.sample("push_failed_total", [("provider", "webhook"), ("reason", "expired")], Double(webhook.died))
            for platform in direct?.0 ?? [] {
                for reason in PushMetrics.Reason.allCases {
                    metrics.sample("push_failed_total", [("provider", platform.rawValue), ("reason", reason.rawValue)],
                                   Double(direct?.1.failed[platform]?[reason] ?? 0))
                }
            }
        }
        if let direct {
            metrics.describe("push_tokens_removed_total", .counter,
                             help: "Device tokens removed because their service said they are dead, by provider.")
            for platform in direct.0 {
                metrics.sample("push_tokens_removed_total", [("provider", platform.rawValue)], Double(direct.1.removed[platform] ?? 0))
            }
        }
        // Read from the database; while it is away this one is left out rather than
        // reported as zero.
        guard let depths else { return }
        metrics.add("push_queue_depth", .gauge, help: "Pushes waiting to be delivered (notifications, then devices).",
                    value: (depths[JobKind.push.name]?.pending ?? 0) + (depths[JobKind.pushSend.name]?.pending ?? 0))
    }
}
