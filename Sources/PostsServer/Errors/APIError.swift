/// A request the application will not or cannot carry out, said in its own terms. Services
/// and input readers throw these and know nothing of HTTP; `APIError+HTTP` is the one place
/// that turns each reason into API.md's status and error code.
struct APIError: Error, Sendable, Equatable {
    enum Reason: Sendable, Equatable {
        /// The request cannot be read (a malformed cursor, an unknown query value).
        case malformed
        /// No caller, or a dead credential.
        case unauthenticated
        /// The caller may not do this (another's post).
        case forbidden
        case notFound
        /// The state forbids it (a taken username, a cycle, a key still in use).
        case conflict
        /// What was asked for is no longer kept (a pruned change cursor).
        case gone
        /// A body or file of a kind this route does not take.
        case unsupportedMedia
        /// Well-formed but invalid values.
        case invalid
        case tooManyRequests
        /// A dependency is away for now.
        case unavailable
        /// Our fault: the detail goes to the log only.
        case failed
    }

    let reason: Reason
    let message: String
    /// Seconds after which the same request may succeed (a 409 in progress, 429, 503).
    var retryAfter: Int?

    init(_ reason: Reason, _ message: String, retryAfter: Int? = nil) {
        self.reason = reason
        self.message = message
        self.retryAfter = retryAfter
    }

    static func notFound(_ message: String) -> APIError { APIError(.notFound, message) }
    static func forbidden(_ message: String) -> APIError { APIError(.forbidden, message) }
    static func conflict(_ message: String) -> APIError { APIError(.conflict, message) }
    static func invalid(_ message: String) -> APIError { APIError(.invalid, message) }
    static func malformed(_ message: String) -> APIError { APIError(.malformed, message) }

    static func unauthenticated(_ message: String = "sign in first: send Authorization: Bearer <token>") -> APIError {
        APIError(.unauthenticated, message)
    }
}
