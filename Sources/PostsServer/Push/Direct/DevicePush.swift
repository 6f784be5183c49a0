import Foundation

/// One notification to one device, as a `push.send` job loaded it: what to say, where,
/// and the badge (the recipient's unread notifications when it is sent).
struct DevicePush: Sendable {
    let payload: PushPayload
    let token: String
    let badge: Int
}

/// A push service this server sends to directly (API.md "Push to every device"): APNs,
/// FCM or a browser's Web Push service. It turns a batch of pushes into requests on the
/// shared connections and each answer into a verdict, renewing its own credentials (and
/// sending once more) when the service says they expired.
protocol PushProvider: AnyObject {
    /// The platform of its tokens (`push_tokens.platform`) and the `provider` label.
    var platform: PushTokenInput.Platform { get }
    /// One verdict per push, in order. `now` is real time: the services judge tokens by
    /// their own clocks, never by the dev clock.
    func send(_ pushes: [DevicePush], over connections: CurlMultiplexer, now: Date) -> [ProviderVerdict]
}

extension PushProvider {
    /// The verdict for an exchange that did not complete (refused, reset, timed out).
    static func unreachable(_ response: CurlMultiplexer.Response) -> ProviderVerdict {
        .retry("unreachable: \(response.message)", after: nil)
    }

    /// Sends the requests that `request` makes (nil: decided without sending, by
    /// `decided`) and judges each answer with `judge`.
    func exchange(_ pushes: [DevicePush], over connections: CurlMultiplexer,
                  request: (DevicePush) -> Result<CurlMultiplexer.Request, ProviderVerdictBox>,
                  judge: (CurlMultiplexer.Response) -> ProviderVerdict) -> [ProviderVerdict] {
        var verdicts = [ProviderVerdict?](repeating: nil, count: pushes.count)
        var requests: [CurlMultiplexer.Request] = []
        var sent: [Int] = []
        for (index, push) in pushes.enumerated() {
            switch request(push) {
            case .success(let made):
                requests.append(made)
                sent.append(index)
            case .failure(let decided):
                verdicts[index] = decided.verdict
            }
        }
        for (index, response) in zip(sent, connections.perform(requests)) {
            if response.refusedPeer {
                verdicts[index] = .dropped("the endpoint is at a private address")
            } else {
                verdicts[index] = response.completed ? judge(response) : Self.unreachable(response)
            }
        }
        return verdicts.map { $0 ?? .retry("not sent", after: nil) }
    }

    /// Sends the pushes; those whose answer asked for new credentials are sent once more
    /// after `renew`, and a second such answer waits for a retry.
    func sendRenewingOnce(_ pushes: [DevicePush], attempt: ([DevicePush]) -> [ProviderVerdict],
                          renew: () -> Void) -> [ProviderVerdict] {
        var verdicts = attempt(pushes)
        let expired = verdicts.indices.filter { verdicts[$0] == .renewCredentials }
        guard !expired.isEmpty else { return verdicts }
        renew()
        let again = attempt(expired.map { pushes[$0] })
        for (index, verdict) in zip(expired, again) {
            verdicts[index] = verdict == .renewCredentials ? .retry("the credentials were refused twice", after: nil) : verdict
        }
        return verdicts
    }
}

/// A verdict reached before sending (a token that cannot be one), as a `Result`'s failure.
struct ProviderVerdictBox: Error {
    let verdict: ProviderVerdict
}
