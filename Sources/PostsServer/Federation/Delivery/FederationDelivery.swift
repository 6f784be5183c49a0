import Foundation
import Postgres

/// `federation.deliver`: a batch of (activity, inbox) sent at once, each signed by its
/// actor's key (API.md "Federation", Out). A `2xx` is done; a `4xx` other than `408` and
/// `429` is the inbox's refusal and no retry mends it; anything else is retried after the
/// kind's backoff (or the `Retry-After` asked) for 2 days. A host failing for 7 days is
/// skipped until it answers again (a delivery that succeeds, or an activity it sends us:
/// `InboxService`); a domain blocked meanwhile is skipped too.
final class FederationDelivery: JobHandler {
    static let hostDownSkipSeconds = 7 * 86_400

    private let client: FederationClient
    private let keys: ActorKeys
    private let urls: FederationURLs
    private let metrics: FederationMetrics

    init(client: FederationClient, keys: ActorKeys, urls: FederationURLs, metrics: FederationMetrics) {
        self.client = client
        self.keys = keys
        self.urls = urls
        self.metrics = metrics
    }

    static func worker(settings: FederationSettings, keys: ActorKeys, urls: FederationURLs, metrics: FederationMetrics) -> JobWorker {
        JobWorker(kind: .federationDeliver, makeHandler: { _ in
            FederationDelivery(client: try FederationClient(settings: settings), keys: keys, urls: urls, metrics: metrics)
        })
    }

    private struct Item {
        let activity: Int64
        let inbox: String
        let domain: String
    }

    func perform(_ jobs: [ClaimedJob], context: JobContext) throws -> [JobOutcome] {
        var outcomes = [JobOutcome?](repeating: nil, count: jobs.count)
        var items: [Int: Item] = [:]
        for (index, job) in jobs.enumerated() {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(job.payload.utf8))) as? [String: Any],
                  let activity = (object[JobPayload.Member.activityID.rawValue] as? NSNumber)?.int64Value,
                  let inbox = object[JobPayload.Member.inbox.rawValue] as? String,
                  let target = FederationClient.Target(inbox, allowHTTP: true)
            else {
                outcomes[index] = .dead("a malformed payload")
                continue
            }
            items[index] = Item(activity: activity, inbox: inbox, domain: target.host.lowercased())
        }
        let states = try read(items, context: context)
        var deliveries: [FederationClient.Delivery] = []
        var sent: [Int] = []
        for (index, item) in items.sorted(by: { $0.key < $1.key }) {
            guard let state = states[index], let body = state.json else {
                outcomes[index] = .skipped // the activity (its actor) is gone
                continue
            }
            if state.blocked {
                outcomes[index] = .skipped
            } else if state.downTooLong {
                metrics.count(.hostSkipped)
                outcomes[index] = .skipped
            } else {
                let key = try keys.key(of: state.actor)
                deliveries.append(FederationClient.Delivery(
                    inbox: item.inbox, body: Array(body.utf8),
                    signer: FederationClient.Signer(keyID: urls.keyID(state.actor), privateKeyPEM: key.privateKeyPEM)))
                sent.append(index)
            }
        }
        let answers = context.isRunning() ? client.deliver(deliveries) : deliveries.map { _ in nil }
        var answered: Set<String> = [], failing: Set<String> = []
        for (position, index) in sent.enumerated() {
            let domain = items[index]!.domain
            guard let answer = answers[position] else {
                outcomes[index] = context.isRunning() ? .dead("not an inbox we may post to") : .untried
                continue
            }
            let outcome = Self.outcome(of: answer)
            outcomes[index] = outcome
            switch outcome {
            case .done:
                answered.insert(domain)
                metrics.count(.delivered)
            case .dead:
                if !answer.refusedPeer { answered.insert(domain) }
                metrics.count(.refused)
            default:
                failing.insert(domain)
                metrics.count(.failed)
            }
        }
        try record(answered: answered, failing: failing.subtracting(answered), context: context)
        return outcomes.map { $0 ?? .untried }
    }

    static func outcome(of answer: CurlMultiplexer.Response) -> JobOutcome {
        if answer.refusedPeer { return .dead("the inbox is at a private address") }
        guard answer.completed else { return .retry(answer.message) }
        switch answer.status {
        case 200..<300: return .done
        case 408, 429: return .retry("the inbox answered \(answer.status)", after: answer.retryAfter.flatMap { Int($0) })
        case 400..<500: return .dead("the inbox refused it (\(answer.status))")
        default: return .retry("the inbox answered \(answer.status)", after: answer.retryAfter.flatMap { Int($0) })
        }
    }

    private struct State {
        let json: String?
        let actor: Int64
        let blocked: Bool
        let downTooLong: Bool
    }

    /// Each item's activity, its actor, and its host's standing, in one query.
    private func read(_ items: [Int: Item], context: JobContext) throws -> [Int: State] {
        guard !items.isEmpty else { return [:] }
        let list = items.map { ["position": $0.key, "activity": $0.value.activity, "domain": $0.value.domain] as [String: Any] }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: list), as: UTF8.self)
        return try context.pool.withConnection { connection in
            var states: [Int: State] = [:]
            for row in try connection.query("""
                SELECT r.position, a.json, coalesce(a.actor_id, 0) AS actor_id, b.domain IS NOT NULL AS blocked,
                       coalesce(h.failing_since < \(context.clock.now) - make_interval(secs => \(Self.hostDownSkipSeconds)), false) AS down
                FROM json_to_recordset(\(json)::json) AS r(position int, activity bigint, domain text)
                LEFT JOIN outgoing_activities a ON a.id = r.activity
                LEFT JOIN federation_hosts h ON h.domain = r.domain
                LEFT JOIN domain_blocks b ON b.domain = r.domain AND b.action = 'block'
                """).rows {
                states[try row.decode("position")] = State(json: try row.decode("json", as: String?.self),
                                                           actor: try row.decode("actor_id"), blocked: try row.decode("blocked"),
                                                           downTooLong: try row.decode("down"))
            }
            return states
        }
    }

    /// Hosts that answered are well again; those that did not are failing since their
    /// first failure.
    private func record(answered: Set<String>, failing: Set<String>, context: JobContext) throws {
        guard !answered.isEmpty || !failing.isEmpty else { return }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: [
            "answered": Array(answered), "failing": Array(failing),
        ]), as: UTF8.self)
        let now = context.clock.now
        try context.pool.withConnection { connection in
            try connection.query("""
                INSERT INTO federation_hosts AS h (domain, failing_since, last_success_at)
                SELECT d, NULL, \(now) FROM json_array_elements_text(\(json)::json -> 'answered') d
                UNION ALL
                SELECT d, \(now), NULL FROM json_array_elements_text(\(json)::json -> 'failing') d
                ON CONFLICT (domain) DO UPDATE SET
                    failing_since = CASE WHEN excluded.failing_since IS NULL THEN NULL ELSE coalesce(h.failing_since, excluded.failing_since) END,
                    last_success_at = coalesce(excluded.last_success_at, h.last_success_at)
                """)
        }
    }
}
