import Postgres

/// Sends each new notification on its way: the `push.deliver` jobs (`JobKind.push`), one
/// per notification, each with its `X-Posts-Delivery` id fixed when it was queued. A batch
/// reads what its pushes need as things are now (the recipient's tokens, the actor's
/// names). The tokens of a platform this instance pushes to directly (APNs, FCM, Web Push)
/// each get a `push.send` job, queued once by the same statement; the rest go to
/// `PUSH_WEBHOOK_URL`, when set, over one connection with no database connection held. A
/// notification that is gone (its act undone) or that its recipient may no longer see (the
/// actor since muted, blocked or suspended) is not pushed: its job is simply done.
final class PushDelivery: JobHandler {
    private let client: PushWebhookClient?
    /// The platforms whose tokens get `push.send` jobs instead of the webhook.
    private let direct: [PushTokenInput.Platform]

    init(settings: PushSettings?, direct: [PushTokenInput.Platform], cancellation: CurlTransfer.Cancellation) throws {
        client = try settings.map { try PushWebhookClient(settings: $0, cancellation: cancellation) }
        self.direct = direct
    }

    /// The push kind's place in the job runner.
    static func worker(settings: PushSettings?, direct: [PushTokenInput.Platform]) -> JobWorker {
        JobWorker(kind: .push, makeHandler: { cancellation in
            try PushDelivery(settings: settings, direct: direct, cancellation: cancellation)
        })
    }

    /// How long one batch posts to the webhook (each post may take its 10 s timeout).
    static let postingBudget: Duration = .seconds(60)

    private struct Delivery {
        let deliveryID: String
        let payload: PushPayload
    }

    func perform(_ jobs: [ClaimedJob], context: JobContext) throws -> [JobOutcome] {
        let (deliveries, queued) = try load(jobs, context: context)
        if queued > 0 { context.wake() }
        guard let client else { return jobs.map { deliveries[$0.id] == nil ? .skipped : .done } }
        // A slow receiver cannot make a batch outlast its lease: what is left goes back.
        let stopPosting = ContinuousClock.now + Self.postingBudget
        return context.tryInOrder(jobs) { job in
            guard let delivery = deliveries[job.id] else { return .skipped }
            guard ContinuousClock.now < stopPosting else { return .untried }
            switch client.post(delivery.payload.body, deliveryID: delivery.deliveryID) {
            case .delivered: return .done
            case .retry(let reason): return .retry(reason)
            case .invalidTokens(let tokens):
                do {
                    try remove(tokens, of: delivery.payload, on: context.pool)
                    return .done
                } catch {
                    return .retry("could not remove the invalid tokens: \(error)")
                }
            }
        }
    }

    /// The tokens a receiver's 410 named, among those this push carried (a receiver cannot
    /// remove anyone else's): their apps are gone.
    private func remove(_ tokens: [String], of payload: PushPayload, on pool: ConnectionPool) throws {
        let named = Set(tokens)
        let carried = payload.tokens.filter { named.contains($0.token) }
        guard !carried.isEmpty else { return }
        try pool.withRetriedStatement { connection in
            try connection.query("""
                DELETE FROM push_tokens t
                USING unnest(\(PostgresArray(carried.map(\.platform))), \(PostgresArray(carried.map(\.token)))) AS r(platform, token)
                WHERE t.platform = r.platform AND t.token = r.token AND t.user_id = \(payload.recipientID)
                """)
        }
    }

    /// The jobs' pushes that still stand, by job: the notification, its actor's names and
    /// the recipient's webhook tokens as they are now (a token removed meanwhile is never
    /// posted); and how many `push.send` jobs the same statement queued for the direct
    /// platforms' tokens (on a job's first try only: it is marked `expanded`).
    private func load(_ jobs: [ClaimedJob], context: JobContext) throws -> ([Int64: Delivery], queued: Int) {
        let now = context.clock.now
        let directNames = PostgresArray(direct.map(\.rawValue))
        let rows = try context.pool.withConnection { connection in
            try connection.query("""
                WITH claimed AS (
                    SELECT j.id AS job_id, \(JobPayload.member(.deliveryID, of: "j.payload")) AS delivery_id,
                           \(JobPayload.has(.expanded, in: "j")) AS expanded, n.id AS notification_id, n.type,
                           n.recipient_id, n.actor_id, n.post_id, n.comment_id::text AS comment_id, pr.username, pr.full_name
                    FROM jobs j
                    JOIN notifications n ON n.id = \(JobPayload.member(.notificationID, of: "j.payload", as: "bigint"))
                    JOIN profiles pr ON pr.user_id = n.actor_id
                    WHERE j.id = ANY(\(PostgresArray(jobs.map(\.id))))
                      \(Visibility.visibleNow(on: .push, author: "n.actor_id", viewer: "n.recipient_id", suspendedFlag: "pr.suspended"))
                ), direct AS (
                    INSERT INTO jobs (kind, payload, run_at, created_at)
                    SELECT \(JobKind.pushSend.name), \(JobPayload.pushSend(notification: "c.notification_id", platform: "t.platform",
                                                                          token: "t.token")), \(now), \(now)
                    FROM claimed c JOIN push_tokens t ON t.user_id = c.recipient_id AND t.platform = ANY(\(directNames))
                    WHERE NOT c.expanded
                    ORDER BY c.job_id, t.created_at, t.platform, t.token
                    RETURNING 1
                ), marked AS (
                    UPDATE jobs j SET payload = \(JobPayload.marked(.expanded, in: "j"))
                    FROM claimed c WHERE j.id = c.job_id AND NOT c.expanded AND cardinality(\(directNames)) > 0
                )
                SELECT c.*, t.platform, t.token, t.device_id, (SELECT count(*) FROM direct) AS queued
                FROM claimed c
                LEFT JOIN push_tokens t ON t.user_id = c.recipient_id AND t.platform <> ALL(\(directNames))
                ORDER BY c.job_id, t.created_at, t.platform, t.token
                """).rows
        }
        let queued: Int = try rows.first?.decode("queued") ?? 0
        // One row per token (or one without any): folded back into one push each.
        var deliveries: [Int64: Delivery] = [:]
        var tokens: [PushPayload.Token] = []
        for (index, row) in rows.enumerated() {
            let jobID: Int64 = try row.decode("job_id")
            if let platform: String = try row.decode("platform") {
                tokens.append(PushPayload.Token(platform: platform, token: try row.decode("token"),
                                                deviceID: try row.decode("device_id")))
            }
            let next: Int64? = index + 1 < rows.count ? try rows[index + 1].decode("job_id") : nil
            guard next != jobID else { continue }
            let payload = PushPayload(
                notificationID: try row.decode("notification_id"), type: try row.decode("type"),
                recipientID: try row.decode("recipient_id"), actorID: try row.decode("actor_id"),
                actorUsername: try row.decode("username"), actorFullName: try row.decode("full_name"),
                postID: try row.decode("post_id"), commentID: try row.decode("comment_id"), tokens: tokens)
            deliveries[jobID] = Delivery(deliveryID: try row.decode("delivery_id"), payload: payload)
            tokens = []
        }
        return (deliveries, queued)
    }
}
