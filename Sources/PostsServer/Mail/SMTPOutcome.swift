/// What became of one try to hand a message to the relay, in the terms of API.md's retry
/// rule: only the final 250 delivers; a 5xx reply is final; everything else (4xx replies,
/// refused or dropped connections, TLS failures, timeouts) is worth another try.
enum SMTPOutcome: Sendable, Equatable {
    case delivered
    case retry(String)
    case rejected(String)

    /// From libcurl's result code and the last SMTP reply code it saw (0 for none).
    /// libcurl reports a refused recipient or DATA as a generic send error or a weird reply;
    /// the reply code tells them apart.
    static func classify(curlCode: Int, replyCode: Int, message: String, cancelled: Bool) -> SMTPOutcome {
        if curlCode == 0 { return .delivered }
        let detail = replyCode > 0 ? "\(message) (last reply \(replyCode))" : message
        if cancelled { return .retry("stopped while sending: \(detail)") }
        // A login the relay refused (535) is the operator's to fix, and fixing it must not
        // cost the messages waiting meanwhile: retried, and health says failing.
        if curlCode == loginDenied { return .retry(detail) }
        if (500...599).contains(replyCode) { return .rejected(detail) }
        return .retry(detail)
    }

    /// CURLE_LOGIN_DENIED.
    static let loginDenied = 67

    var failed: Bool { self != .delivered }
}
