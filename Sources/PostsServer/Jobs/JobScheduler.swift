import Postgres

/// What a write uses to queue background work: the job goes in the write's own transaction
/// (it exists exactly when its cause committed), and once that transaction has committed
/// this instance's runner is woken for it, so the work starts at once rather than at the
/// next poll. Only the kinds some runner on this instance can run are queued: without
/// `SMTP_URL` no mail job is written (the message waits in `outbox` for an external
/// mailer), without `PUSH_WEBHOOK_URL` no push.
struct JobScheduler: Sendable {
    let enabled: Set<JobKind>
    let wake: @Sendable () -> Void
    /// A job is due from its cause's time on.
    var clock = ServerClock()

    /// A scheduler that queues nothing (tools that write without a server running).
    static let none = JobScheduler(enabled: [], wake: {})

    func runs(_ kind: JobKind) -> Bool { enabled.contains(kind) }

    /// Queues one job of `kind` per payload, in order, in the caller's transaction.
    func enqueue(_ kind: JobKind, _ payloads: [JSONObject], on connection: PostgresConnection) throws {
        guard runs(kind), !payloads.isEmpty else { return }
        try JobQueue.enqueue(kind, payloads: payloads, clock: clock, on: connection)
        connection.onCommit(wake)
    }
}
