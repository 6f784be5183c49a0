/// API.md's backoff between tries of one message: 1 s, 2 s, 4 s … doubling, at most 5 min.
enum MailRetry {
    static let maxDelaySeconds = 300

    /// The wait after the `attempt`th try (1 for the first) failed.
    static func delaySeconds(afterAttempt attempt: Int) -> Int {
        let exponent = min(max(attempt - 1, 0), 20)
        return min(1 << exponent, maxDelaySeconds)
    }
}
