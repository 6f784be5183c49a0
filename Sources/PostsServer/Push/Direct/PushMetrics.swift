import Locking

/// What this instance's direct pushes came to, per service, for `/metrics`
/// (`push_sent_total{provider}`, `push_failed_total{provider,reason}`,
/// `push_tokens_removed_total{provider}`) and `/api/health`'s `push` (a service whose last
/// try failed is `failing` until one succeeds).
final class PushMetrics: Sendable {
    /// Why a push failed, as a label: a fixed set, whatever a service answers.
    enum Reason: String, CaseIterable, Sendable {
        /// The token is dead (uninstalled, not this app's): it was removed.
        case tokenRemoved = "token_removed"
        /// The service refused this push for good (too large, malformed, a refused address).
        case refused
        /// The service was busy, failing or unreachable: tried again later (each such try
        /// counts).
        case unavailable
    }

    struct Snapshot: Sendable {
        var sent: [PushTokenInput.Platform: Int] = [:]
        var failed: [PushTokenInput.Platform: [Reason: Int]] = [:]
        var removed: [PushTokenInput.Platform: Int] = [:]
        var failing: Set<PushTokenInput.Platform> = []
    }

    private let state = ParkingLock(Snapshot())

    var snapshot: Snapshot { state.withLock { $0 } }

    func record(_ verdict: ProviderVerdict, of platform: PushTokenInput.Platform) {
        state.withLock { state in
            switch verdict {
            case .delivered:
                state.sent[platform, default: 0] += 1
                state.failing.remove(platform)
            case .removeToken:
                state.failed[platform, default: [:]][.tokenRemoved, default: 0] += 1
                state.failing.remove(platform)
            case .dropped:
                state.failed[platform, default: [:]][.refused, default: 0] += 1
            case .retry, .renewCredentials:
                state.failed[platform, default: [:]][.unavailable, default: 0] += 1
                state.failing.insert(platform)
            }
        }
    }

    func tokenRemoved(platform: String) {
        guard let platform = PushTokenInput.Platform(rawValue: platform) else { return }
        state.withLock { $0.removed[platform, default: 0] += 1 }
    }
}
