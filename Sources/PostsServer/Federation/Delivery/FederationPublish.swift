import Foundation
import Postgres

/// `federation.publish`: an activity of ours built once (`OutgoingActivity`) and, in the
/// same transaction, one `federation.deliver` job per inbox it goes to: each remote
/// recipient's host's shared inbox once (its own inbox when it has none), none on a
/// blocked domain. Only the database is touched.
final class FederationPublish: JobHandler {
    private let urls: FederationURLs
    private let notes: NoteDocuments

    init(urls: FederationURLs, notes: NoteDocuments) {
        self.urls = urls
        self.notes = notes
    }

    static func worker(urls: FederationURLs, notes: NoteDocuments) -> JobWorker {
        JobWorker(kind: .federationPublish, makeHandler: { _ in FederationPublish(urls: urls, notes: notes) })
    }

    func perform(_ jobs: [ClaimedJob], context: JobContext) throws -> [JobOutcome] {
        let outcomes = context.tryEach(jobs) { try publish($0, context: context) }
        if outcomes.contains(.done) { context.wake() }
        return outcomes
    }

    private func publish(_ job: ClaimedJob, context: JobContext) throws -> JobOutcome {
        guard let order = Self.order(from: job.payload) else { return .dead("a malformed payload: \(job.payload)") }
        return try context.pool.withTransaction { connection -> JobOutcome in
            guard let activity = try OutgoingActivity.build(order, urls: urls, notes: notes, clock: context.clock,
                                                            on: connection) else { return .skipped }
            var document = activity.json
            document["@context"] = ActivityPub.contexts
            let json = String(decoding: ActivityPub.encode(document), as: UTF8.self)
            let now = context.clock.now
            try connection.query("""
                WITH inboxes AS (
                    SELECT DISTINCT coalesce(ra.shared_inbox, ra.inbox) AS inbox FROM remote_actors ra
                    WHERE ra.user_id IN (\(activity.recipients))
                      AND NOT EXISTS (SELECT 1 FROM domain_blocks b WHERE b.domain = ra.domain AND b.action = 'block')
                ), activity AS (
                    INSERT INTO outgoing_activities (actor_id, json, created_at)
                    SELECT \(activity.actor), \(json), \(now) WHERE EXISTS (SELECT 1 FROM inboxes)
                    RETURNING id
                )
                INSERT INTO jobs (kind, payload, run_at, created_at)
                SELECT \(JobKind.federationDeliver.name), \(JobPayload.federationDeliver(activity: "a.id", inbox: "i.inbox")), \(now), \(now)
                FROM activity a, inboxes i ORDER BY i.inbox
                """)
            return .done
        }
    }

    /// The payload's members (`JobPayload.federationPublish`).
    static func order(from payload: String) -> OutgoingActivity.Order? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: Any],
              let kind = (object[JobPayload.Member.activity.rawValue] as? String).flatMap(OutgoingActivity.Kind.init),
              let actor = (object[JobPayload.Member.actor.rawValue] as? NSNumber)?.int64Value else { return nil }
        var order = OutgoingActivity.Order(kind: kind, actor: actor)
        order.post = (object[JobPayload.Member.post.rawValue] as? NSNumber)?.int64Value
        order.comment = (object[JobPayload.Member.comment.rawValue] as? String).flatMap(UUID.init(uuidString:))
        order.followee = (object[JobPayload.Member.followee.rawValue] as? NSNumber)?.int64Value
        order.remoteActivity = object[JobPayload.Member.remoteActivity.rawValue] as? String
        return order
    }
}
