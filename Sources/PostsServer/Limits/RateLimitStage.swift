import HTTP

/// Refuses (429 with `Retry-After`) sign-ins and writes from an address past
/// `RATE_LIMIT_IP` a minute. Reads are never limited: they cost little, and a client's
/// pages and refreshes must not fail because it also wrote. It runs from the head, before
/// the caller is resolved and the body read, so a refused request costs no database round
/// trip and no upload.
struct RateLimitStage: AdmissionStage {
    let limiter: RateLimiter

    func admit(_ head: RequestHead, remoteAddress: String, access: Access, _ admitted: inout Admitted) throws {
        if Self.isLimited(head), case .refused(let retryAfter) = limiter.take(for: remoteAddress) {
            throw APIError(.tooManyRequests,
                           "too many sign-ins and writes from this address (at most \(limiter.perMinute) a minute)",
                           retryAfter: retryAfter)
        }
    }

    static func isLimited(_ head: RequestHead) -> Bool {
        let isRead = head.method == .GET || head.method == .HEAD || head.method == .OPTIONS
        return !isRead || head.path.hasPrefix("/api/auth/")
    }
}
