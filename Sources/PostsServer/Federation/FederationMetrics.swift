import Synchronization

/// What `/metrics` says of federation on this instance: deliveries by outcome
/// (`federation_deliveries_total{outcome}`) and inbox requests by outcome
/// (`federation_inbox_total{outcome}`).
final class FederationMetrics: Sendable {
    enum Delivery: String, CaseIterable, Sendable {
        case delivered, failed, refused
        case hostSkipped = "host_skipped"
    }

    enum Inbox: String, CaseIterable, Sendable {
        case accepted, duplicate
        case unsigned, forged
        case malformed
        case tooLarge = "too_large"
        case busy
        case blocked
        case ignored
    }

    private let deliveries = Mutex<[Delivery: Int]>([:])
    private let inbox = Mutex<[Inbox: Int]>([:])

    func count(_ outcome: Delivery) { deliveries.withLock { $0[outcome, default: 0] += 1 } }
    func count(_ outcome: Inbox) { inbox.withLock { $0[outcome, default: 0] += 1 } }

    var snapshot: (deliveries: [Delivery: Int], inbox: [Inbox: Int]) {
        (deliveries.withLock { $0 }, inbox.withLock { $0 })
    }
}

extension MetricsRoutes {
    static func addFederation(to metrics: inout MetricsText, federation: FederationMetrics?) {
        guard let federation else { return }
        let snapshot = federation.snapshot
        metrics.describe("federation_deliveries_total", .counter, help: "Activities posted to other servers' inboxes, by outcome.")
        for outcome in FederationMetrics.Delivery.allCases {
            metrics.sample("federation_deliveries_total", [("outcome", outcome.rawValue)], Double(snapshot.deliveries[outcome] ?? 0))
        }
        metrics.describe("federation_inbox_total", .counter, help: "Activities other servers posted to our inboxes, by outcome.")
        for outcome in FederationMetrics.Inbox.allCases {
            metrics.sample("federation_inbox_total", [("outcome", outcome.rawValue)], Double(snapshot.inbox[outcome] ?? 0))
        }
    }
}
