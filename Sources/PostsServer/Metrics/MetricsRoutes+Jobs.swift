/// The job queue's part of `/metrics`: for every kind, what waits on all instances together
/// (how many, how old the oldest, how many died and are kept), and what this instance did.
extension MetricsRoutes {
    static func addJobs(to metrics: inout MetricsText, sources: Sources, depths: [String: JobQueue.Depth]?) {
        let kinds = sources.jobs.kinds
        let statistics = kinds.map { sources.jobs.statistics.counters(of: $0) }
        metrics.describe("jobs_done_total", .counter, help: "Jobs this instance ran to completion, by kind.")
        for (kind, counters) in zip(kinds, statistics) { metrics.sample("jobs_done_total", [("kind", kind.name)], Double(counters.done)) }
        metrics.describe("jobs_skipped_total", .counter,
                         help: "Jobs this instance found nothing left to do for (what they were for is gone), by kind.")
        for (kind, counters) in zip(kinds, statistics) {
            metrics.sample("jobs_skipped_total", [("kind", kind.name)], Double(counters.skipped))
        }
        metrics.describe("jobs_failed_total", .counter, help: "Jobs this instance gave up on (dead-lettered), by kind.")
        for (kind, counters) in zip(kinds, statistics) { metrics.sample("jobs_failed_total", [("kind", kind.name)], Double(counters.died)) }
        // Read from the database; while it is away these are left out rather than reported as zero.
        guard let depths else { return }
        metrics.describe("jobs_queued", .gauge, help: "Jobs waiting or running, on every instance, by kind.")
        for kind in kinds { metrics.sample("jobs_queued", [("kind", kind.name)], Double(depths[kind.name]?.pending ?? 0)) }
        metrics.describe("jobs_oldest_seconds", .gauge, help: "Age of the oldest job waiting or running, by kind.")
        for kind in kinds {
            metrics.sample("jobs_oldest_seconds", [("kind", kind.name)], depths[kind.name]?.oldestSeconds ?? 0)
        }
        metrics.describe("jobs_dead", .gauge, help: "Jobs given up on and kept for a week for the operator, by kind.")
        for kind in kinds { metrics.sample("jobs_dead", [("kind", kind.name)], Double(depths[kind.name]?.dead ?? 0)) }
    }
}
