import Foundation

/// Sends to browsers' push services (API.md "Push to every device"): each subscription's
/// endpoint gets the message encrypted for it alone (RFC 8291) with VAPID authorization
/// (RFC 8292), `TTL` and `Urgency`. Endpoints are the browsers' (users send them), so a
/// peer at a private or loopback address is refused unless `WEBPUSH_ALLOW_PRIVATE=1`.
final class WebPushSender: PushProvider {
    let platform = PushTokenInput.Platform.webpush
    private let vapid: VAPID
    private let allowsPrivatePeers: Bool
    /// A VAPID token per push service's origin, made again when half its life is gone.
    private var tokens: [String: (authorization: String, renewAt: Date)] = [:]

    /// How long a push service keeps a message for a browser that is offline: two days,
    /// as Mastodon asks.
    static let timeToLiveSeconds = 48 * 3600

    init(vapid: VAPID, allowsPrivatePeers: Bool) {
        self.vapid = vapid
        self.allowsPrivatePeers = allowsPrivatePeers
    }

    func send(_ pushes: [DevicePush], over connections: CurlMultiplexer, now: Date) -> [ProviderVerdict] {
        exchange(pushes, over: connections, request: { push in
            // Kept before Web Push was configured, a token may be anything: it can never
            // be delivered, so it goes.
            guard let subscription = try? WebPushSubscription(json: push.token) else {
                return .failure(ProviderVerdictBox(verdict: .removeToken("not a subscription")))
            }
            let body: [UInt8]
            let authorization: String
            do {
                body = try WebPushEncryption.encrypt(push.payload.webPushMessage(badge: push.badge), to: subscription.keys)
                authorization = try self.authorization(for: subscription.endpoint, now: now)
            } catch {
                return .failure(ProviderVerdictBox(verdict: .dropped("could not seal the message: \(error)")))
            }
            return .success(CurlMultiplexer.Request(
                url: subscription.endpoint.absoluteString,
                headers: ["authorization: \(authorization)", "ttl: \(Self.timeToLiveSeconds)", "urgency: normal",
                          "content-encoding: aes128gcm", "content-type: application/octet-stream"],
                body: body, publicPeersOnly: !allowsPrivatePeers))
        }, judge: { ProviderVerdict.webPush(status: $0.status, retryAfter: $0.retryAfter) })
    }

    private func authorization(for endpoint: URL, now: Date) throws -> String {
        let origin = VAPID.origin(of: endpoint)
        if let kept = tokens[origin], now < kept.renewAt { return kept.authorization }
        let authorization = try vapid.authorization(for: endpoint, at: now)
        if tokens.count > 1000 { tokens.removeAll() }
        tokens[origin] = (authorization, now.addingTimeInterval(VAPID.lifetime / 2))
        return authorization
    }
}
