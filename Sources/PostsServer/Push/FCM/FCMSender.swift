import Foundation

/// Sends to Firebase Cloud Messaging's HTTP v1 API (API.md "Push to every device"): an
/// OAuth 2.0 access token traded for the service account's signed assertion at its
/// `token_uri`, kept until five minutes before it expires, then `messages:send` for each
/// push, all at once over the one connection. A `401` gets a new access token and one
/// more try; the rest of the answers are `ProviderVerdict.fcm`'s.
final class FCMSender: PushProvider {
    let platform = PushTokenInput.Platform.fcm
    private let account: FCMServiceAccount
    private let sendURL: String
    private var accessToken: (value: String, renewAt: Date)?

    /// An access token is renewed this long before Google says it expires.
    static let renewalMargin: TimeInterval = 5 * 60

    init(settings: PushProviderSettings.FCM, account: FCMServiceAccount) {
        self.account = account
        sendURL = account.sendURL(base: settings.url)
    }

    func send(_ pushes: [DevicePush], over connections: CurlMultiplexer, now: Date) -> [ProviderVerdict] {
        sendRenewingOnce(pushes, attempt: { attempt($0, over: connections, now: now) }, renew: { accessToken = nil })
    }

    private func attempt(_ pushes: [DevicePush], over connections: CurlMultiplexer, now: Date) -> [ProviderVerdict] {
        let bearer: String
        switch token(over: connections, now: now) {
        case .success(let token): bearer = token
        case .failure(let refusal): return pushes.map { _ in refusal.verdict }
        }
        return exchange(pushes, over: connections, request: { push in
            .success(CurlMultiplexer.Request(url: sendURL,
                                             headers: ["authorization: Bearer \(bearer)", "content-type: application/json"],
                                             body: push.payload.fcmMessage(token: push.token)))
        }, judge: { ProviderVerdict.fcm(status: $0.status, body: $0.body, retryAfter: $0.retryAfter) })
    }

    /// The kept access token, or a new one from `token_uri`.
    private func token(over connections: CurlMultiplexer, now: Date) -> Result<String, ProviderVerdictBox> {
        if let accessToken, now < accessToken.renewAt { return .success(accessToken.value) }
        let assertion: String
        do {
            assertion = try account.assertion(at: now)
        } catch {
            return .failure(ProviderVerdictBox(verdict: .retry("could not sign the assertion: \(error)", after: nil)))
        }
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        let response = connections.perform([CurlMultiplexer.Request(
            url: account.tokenURI, headers: ["content-type: application/x-www-form-urlencoded"], body: Array(form.utf8))])[0]
        guard response.completed else { return .failure(ProviderVerdictBox(verdict: Self.unreachable(response))) }
        guard response.status == 200,
              let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
              let value = object["access_token"] as? String, !value.isEmpty,
              !value.utf8.contains(where: { $0 < 0x21 || $0 > 0x7E }) else {
            let words = String(decoding: response.body.prefix(200), as: UTF8.self)
            return .failure(ProviderVerdictBox(verdict: .retry("token_uri refused the assertion: HTTP \(response.status) \(words)",
                                                               after: ProviderVerdict.seconds(response.retryAfter))))
        }
        let lifetime = (object["expires_in"] as? NSNumber)?.doubleValue ?? 3600
        accessToken = (value, now.addingTimeInterval(max(lifetime - Self.renewalMargin, 0)))
        return .success(value)
    }
}
