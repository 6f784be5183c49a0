import Foundation

/// What became of one try to post a push: a 2xx delivers; a `410` whose body is
/// `{"invalid_tokens":[token, …]}` says those tokens' apps are gone (API.md "Feeds at any
/// scale": they are removed, and the push is done); everything else (another status, a
/// refused or dropped connection, a timeout, a TLS failure) is worth another try until the
/// push is an hour old.
enum PushOutcome: Sendable, Equatable {
    case delivered
    case invalidTokens([String])
    case retry(String)

    static func classify(curlCode: Int, status: Int, message: String, answer: [UInt8], cutShort: Bool,
                         cancelled: Bool) -> PushOutcome {
        let accepted = (200...299).contains(status)
        // A 2xx whose body we cut short was accepted all the same.
        if accepted && (curlCode == 0 || cutShort) { return .delivered }
        if cancelled { return .retry("stopped while sending: \(message)") }
        guard curlCode == 0 || cutShort else { return .retry(status > 0 ? "\(message) (after HTTP \(status))" : message) }
        if status == 410, !cutShort, let tokens = invalidTokens(in: answer) { return .invalidTokens(tokens) }
        // The receiver's own words, for the log and `last_error` (controls left out, the
        // first `keptResponseBytes`).
        let text = String(decoding: answer.prefix(PushWebhookClient.keptResponseBytes), as: UTF8.self)
        let shown = text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(String.init).joined()
        return .retry("HTTP \(status)" + (shown.isEmpty ? "" : ": \(shown)"))
    }

    /// The strings of the body's `invalid_tokens` array; nil for any other body (then the
    /// 410 is an error like another, and the push is tried again).
    static func invalidTokens(in body: [UInt8]) -> [String]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let list = object["invalid_tokens"] as? [Any] else { return nil }
        let tokens = list.compactMap { $0 as? String }
        return tokens.count == list.count ? tokens : nil
    }
}
