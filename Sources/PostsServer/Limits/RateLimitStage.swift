import HTTP

/// Refuses (429 with `Retry-After`) sign-ins and writes from an address past
/// `RATE_LIMIT_IP` a minute. Reads are never limited: they cost little, and a client's
/// pages and refreshes must not fail because it also wrote. It runs before the caller is
/// resolved, so a refused request costs no database round trip.
struct RateLimitStage: RequestStage {
    let limiter: RateLimiter

    func handle(_ request: Request, _ context: inout AppContext, next: AppHandler) throws -> Response {
        if Self.isLimited(request), case .refused(let retryAfter) = limiter.take(for: context.http.remoteAddress) {
            throw HTTPError(.tooManyRequests,
                            message: "too many sign-ins and writes from this address (at most \(limiter.perMinute) a minute)",
                            headers: HTTPHeaders([("Retry-After", "\(retryAfter)")]))
        }
        return try next(request, &context)
    }

    static func isLimited(_ request: Request) -> Bool {
        let isRead = request.method == .GET || request.method == .HEAD || request.method == .OPTIONS
        return !isRead || request.path.hasPrefix("/api/auth/")
    }
}
