import Foundation

/// Sends to Apple's push service (API.md "Push to every device"): `POST /3/device/<token>`
/// over HTTP/2, every push a stream of the one connection, with the provider token and
/// the headers Apple documents. `403 ExpiredProviderToken` gets a new token and one more
/// try; the rest of the answers are `ProviderVerdict.apns`'s.
final class APNsSender: PushProvider {
    let platform = PushTokenInput.Platform.apns
    private let settings: PushProviderSettings.APNs
    private var providerToken: APNsProviderToken

    /// How long Apple keeps a push for a device that is off: a day, after which news of a
    /// like is stale.
    static let expirationSeconds: TimeInterval = 24 * 3600

    init(settings: PushProviderSettings.APNs, keyPEM: String) throws {
        self.settings = settings
        providerToken = try APNsProviderToken(pem: keyPEM, keyID: settings.keyID, teamID: settings.teamID)
    }

    func send(_ pushes: [DevicePush], over connections: CurlMultiplexer, now: Date) -> [ProviderVerdict] {
        sendRenewingOnce(pushes, attempt: { attempt($0, over: connections, now: now) }, renew: { providerToken.expire() })
    }

    private func attempt(_ pushes: [DevicePush], over connections: CurlMultiplexer, now: Date) -> [ProviderVerdict] {
        let bearer: String
        do {
            bearer = try providerToken.token(at: now)
        } catch {
            return pushes.map { _ in .retry("could not sign the provider token: \(error)", after: nil) }
        }
        let expiration = Int64(now.timeIntervalSince1970 + Self.expirationSeconds)
        return exchange(pushes, over: connections, request: { push in
            // A token is hex (64 digits today); anything else cannot be one, and must not
            // reach the request's path.
            guard Self.isDeviceToken(push.token) else { return .failure(ProviderVerdictBox(verdict: .removeToken("BadDeviceToken"))) }
            return .success(CurlMultiplexer.Request(
                url: "\(settings.url)/3/device/\(push.token)",
                headers: ["authorization: bearer \(bearer)", "apns-topic: \(settings.topic)", "apns-push-type: alert",
                          "apns-priority: 10", "apns-expiration: \(expiration)", "apns-collapse-id: \(push.payload.thread)",
                          "content-type: application/json"],
                body: push.payload.apnsPayload(badge: push.badge)))
        }, judge: { ProviderVerdict.apns(status: $0.status, body: $0.body, retryAfter: $0.retryAfter) })
    }

    static func isDeviceToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 200 && token.utf8.allSatisfy { byte in
            (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
        }
    }
}
