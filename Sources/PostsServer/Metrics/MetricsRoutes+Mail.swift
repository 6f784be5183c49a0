/// The mailer's part of `/metrics` (API.md "Sign-in mail"): this instance's deliveries and
/// failures (its `mail.send` jobs), and what waits in the outbox on all instances together.
extension MetricsRoutes {
    static func addMail(to metrics: inout MetricsText, sources: Sources) {
        let counters = sources.jobs.statistics.counters(of: .mail)
        metrics.add("mail_sent_total", .counter, help: "Messages this instance handed to the SMTP relay (its 250 to the final dot).",
                    value: counters.done)
        metrics.add("mail_failed_total", .counter,
                    help: "Messages this instance gave up on (a 5xx reply, or undelivered at 15 minutes old).",
                    value: counters.died)
        // The queue is read from the database; while it is away these two are left out
        // rather than reported as zero.
        guard let depth = try? sources.outbox.depth() else { return }
        metrics.add("mail_queue_depth", .gauge, help: "Outbox messages neither sent nor failed.", value: depth.unsent)
        metrics.add("mail_oldest_unsent_seconds", .gauge, help: "Age of the oldest outbox message neither sent nor failed.",
                    value: depth.oldestSeconds)
    }
}
