import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// When a call is tried again by itself, and after how long. Only where repeating cannot
/// do a thing twice: a transport failure of a request that is safe to repeat (GET, PUT,
/// DELETE, or a create carrying its `Idempotency-Key`), a 503 with `Retry-After` (the
/// server did nothing), a 409 with `Retry-After` while the first try of the same
/// idempotency key still runs, and a 408 (the server stopped waiting for the request
/// before it had all of it, so did nothing: Linux's URLSession, sending a request again on
/// a new connection after a kept-alive one was dropped, has been seen to send the head
/// without the body). Attempts are bounded; the waits grow exponentially.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included (1: never retry).
    public var maxAttempts: Int
    /// The wait before the second attempt; it doubles for each further one.
    public var initialDelay: Duration
    /// No wait is longer; a `Retry-After` beyond it is not waited for but thrown.
    public var maximumDelay: Duration

    public init(maxAttempts: Int = 3, initialDelay: Duration = .milliseconds(250), maximumDelay: Duration = .seconds(10)) {
        self.maxAttempts = maxAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    public static let `default` = RetryPolicy()
    public static let never = RetryPolicy(maxAttempts: 1)

    /// What went wrong with one attempt.
    enum Failure {
        case transport(any Error)
        case answer(PostsAPIError)
    }

    /// How long to wait before attempt `attempt + 1`, or nil to give up and throw.
    func delay(after failure: Failure, attempt: Int, repeatable: Bool, idempotencyKey: Bool) -> Duration? {
        guard attempt < maxAttempts else { return nil }
        switch failure {
        case .transport(let error):
            guard repeatable, Self.isTransient(error) else { return nil }
            return backoff(afterAttempt: attempt)
        case .answer(let error) where error.status == 408:
            return backoff(afterAttempt: attempt)
        case .answer(let error):
            let retryable = error.status == 503 || (error.status == 409 && idempotencyKey)
            guard retryable, let wait = error.retryAfter, wait <= maximumDelay else { return nil }
            return wait
        }
    }

    /// `initialDelay · 2^(attempt-1)`, at most `maximumDelay`.
    func backoff(afterAttempt attempt: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(attempt, 1) {
            delay *= 2
            if delay >= maximumDelay { return maximumDelay }
        }
        return min(delay, maximumDelay)
    }

    /// Failures of the network, not of the request: worth another try.
    static func isTransient(_ error: any Error) -> Bool {
        guard let error = error as? URLError else { return false }
        switch error.code {
        case .timedOut, .cannotConnectToHost, .networkConnectionLost, .notConnectedToInternet,
             .cannotFindHost, .dnsLookupFailed, .resourceUnavailable, .badServerResponse:
            return true
        default:
            return false
        }
    }
}
