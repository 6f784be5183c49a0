import Foundation
import Postgres

/// Sends the `push.send` jobs (`JobKind.pushSend`): one notification to one device through
/// its platform's service. A batch reads what its pushes need as things are now (the token
/// still registered to the recipient, the visibility policy, the unread count for the
/// badge), then each service's pushes go out at once over its one connection with no
/// database connection held, and what the services said is recorded: a dead token is
/// deleted (`push_tokens_removed_total`), a busy service is tried again after its
/// `Retry-After`.
final class DirectPushDelivery: JobHandler {
    private let providers: [PushTokenInput.Platform: any PushProvider]
    private let connections: CurlMultiplexer
    private let metrics: PushMetrics

    init(providers: [any PushProvider], connections: CurlMultiplexer, metrics: PushMetrics) {
        self.providers = Dictionary(uniqueKeysWithValues: providers.map { ($0.platform, $0) })
        self.connections = connections
        self.metrics = metrics
    }

    private struct Loaded {
        let push: DevicePush
        let platform: PushTokenInput.Platform
    }

    func perform(_ jobs: [ClaimedJob], context: JobContext) throws -> [JobOutcome] {
        let loaded = try load(jobs, on: context.pool)
        var outcomes = [JobOutcome](repeating: .skipped, count: jobs.count)
        var removals: [(platform: String, token: String, user: Int64)] = []
        for (platform, provider) in providers where context.isRunning() {
            let mine = jobs.indices.compactMap { index in loaded[jobs[index].id].flatMap { $0.platform == platform ? (index, $0.push) : nil } }
            guard !mine.isEmpty else { continue }
            let verdicts = provider.send(mine.map(\.1), over: connections, now: Date())
            for ((index, push), verdict) in zip(mine, verdicts) {
                metrics.record(verdict, of: platform)
                switch verdict {
                case .delivered:
                    outcomes[index] = .done
                case .removeToken:
                    removals.append((platform.rawValue, push.token, push.payload.recipientID))
                    // Nothing more to do: the token goes with the others below.
                    outcomes[index] = .done
                case .retry(let reason, let after):
                    outcomes[index] = .retry(reason, after: after.map { Int($0.rounded(.up)) })
                case .renewCredentials:
                    outcomes[index] = .retry("the service refused the credentials", after: nil)
                case .dropped(let reason):
                    outcomes[index] = .dead(reason)
                }
            }
        }
        // Jobs of a platform not configured here (instances configured apart) wait a while
        // for an instance that has it, rather than come straight back here.
        for (index, job) in jobs.enumerated() where loaded[job.id].map({ providers[$0.platform] == nil }) ?? false {
            outcomes[index] = .retry("this instance does not push to \(loaded[job.id]!.platform.rawValue)", after: 30)
        }
        // Stopped meanwhile: what was not sent, or was cut off by the stop, goes back untried.
        if !context.isRunning() {
            for index in outcomes.indices where loaded[jobs[index].id] != nil {
                if case .retry = outcomes[index] { outcomes[index] = .untried }
                if outcomes[index] == .skipped { outcomes[index] = .untried }
            }
        }
        if !removals.isEmpty {
            do {
                try remove(removals, on: context.pool)
                for removal in removals { metrics.tokenRemoved(platform: removal.platform) }
            } catch {
                // Tried again with the jobs: the next try gets the same answer and removes them.
                let gone = Set(removals.map { "\($0.platform) \($0.token)" })
                for (index, job) in jobs.enumerated() {
                    guard let push = loaded[job.id], gone.contains("\(push.platform.rawValue) \(push.push.token)") else { continue }
                    outcomes[index] = .retry("could not remove the dead token: \(error)")
                }
            }
        }
        return outcomes
    }

    /// Deletes the tokens the services said are dead, where they still belong to the
    /// recipient they were pushed for (re-registered meanwhile by another account, a token
    /// is that account's now, and a new registration).
    private func remove(_ tokens: [(platform: String, token: String, user: Int64)], on pool: ConnectionPool) throws {
        try pool.withRetriedStatement { connection in
            try connection.query("""
                DELETE FROM push_tokens t
                USING unnest(\(PostgresArray(tokens.map(\.platform))), \(PostgresArray(tokens.map(\.token))),
                             \(PostgresArray(tokens.map(\.user)))) AS r(platform, token, user_id)
                WHERE t.platform = r.platform AND t.token = r.token AND t.user_id = r.user_id
                """)
        }
    }

    /// The jobs' pushes that still stand, by job: the notification visible to its recipient
    /// now, the token still theirs, and the badge (counted once per recipient of the batch:
    /// a burst of likes is mostly to one person).
    private func load(_ jobs: [ClaimedJob], on pool: ConnectionPool) throws -> [Int64: Loaded] {
        let rows = try pool.withConnection { connection in
            try connection.query("""
                WITH named AS MATERIALIZED (
                    -- The payloads read first, so that each notification is found by its key
                    -- (not among its recipient's, by a filter on the payload).
                    SELECT j.id AS job_id, \(JobPayload.member(.notificationID, of: "j.payload", as: "bigint")) AS notification_id,
                           \(JobPayload.member(.platform, of: "j.payload")) AS platform, \(JobPayload.member(.token, of: "j.payload")) AS token
                    FROM jobs j WHERE j.id = ANY(\(PostgresArray(jobs.map(\.id))))
                ), claimed AS MATERIALIZED (
                    SELECT d.job_id, t.platform, t.token, n.id AS notification_id, n.type, n.recipient_id, n.actor_id,
                           n.post_id, n.comment_id::text AS comment_id, pr.username, pr.full_name
                    FROM named d
                    JOIN notifications n ON n.id = d.notification_id
                    JOIN profiles pr ON pr.user_id = n.actor_id
                    JOIN push_tokens t ON t.platform = d.platform AND t.token = d.token AND t.user_id = n.recipient_id
                    WHERE true \(Visibility.visibleNow(on: .push, author: "n.actor_id", viewer: "n.recipient_id", suspendedFlag: "pr.suspended"))
                ), badges AS MATERIALIZED (
                    SELECT r.recipient_id, (
                        SELECT count(*) FROM notifications u JOIN profiles a ON a.user_id = u.actor_id
                        WHERE u.recipient_id = r.recipient_id AND NOT u.read
                          \(Visibility.visibleNow(on: .notifications, author: "u.actor_id", viewer: "r.recipient_id", suspendedFlag: "a.suspended"))
                    ) AS unread
                    FROM (SELECT DISTINCT recipient_id FROM claimed) r
                )
                SELECT c.*, b.unread FROM claimed c JOIN badges b ON b.recipient_id = c.recipient_id
                """).rows
        }
        var loaded: [Int64: Loaded] = [:]
        for row in rows {
            guard let platform = PushTokenInput.Platform(rawValue: try row.decode("platform")) else { continue }
            let payload = PushPayload(
                notificationID: try row.decode("notification_id"), type: try row.decode("type"),
                recipientID: try row.decode("recipient_id"), actorID: try row.decode("actor_id"),
                actorUsername: try row.decode("username"), actorFullName: try row.decode("full_name"),
                postID: try row.decode("post_id"), commentID: try row.decode("comment_id"), tokens: [])
            loaded[try row.decode("job_id")] = Loaded(push: DevicePush(payload: payload, token: try row.decode("token"),
                                                                       badge: try row.decode("unread")), platform: platform)
        }
        return loaded
    }
}
