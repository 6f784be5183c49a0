/// What became of one try to post a push: only a 2xx delivers; everything else (another
/// status, a refused or dropped connection, a timeout, a TLS failure) is worth another try
/// until the push is an hour old.
enum PushOutcome: Sendable, Equatable {
    case delivered
    case retry(String)

    static func classify(curlCode: Int, status: Int, message: String, answer: String, cutShort: Bool,
                         cancelled: Bool) -> PushOutcome {
        let accepted = (200...299).contains(status)
        // A 2xx whose body we cut short was accepted all the same.
        if accepted && (curlCode == 0 || cutShort) { return .delivered }
        if cancelled { return .retry("stopped while sending: \(message)") }
        guard curlCode == 0 || cutShort else { return .retry(status > 0 ? "\(message) (after HTTP \(status))" : message) }
        // The receiver's own words, for the log and `last_error` (controls left out).
        let shown = answer.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(String.init).joined()
        return .retry("HTTP \(status)" + (shown.isEmpty ? "" : ": \(shown)"))
    }
}
