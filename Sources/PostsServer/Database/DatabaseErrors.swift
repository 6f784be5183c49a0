import HTTP
import Postgres

/// How database failures look to clients: the one place SQLSTATEs become reasons (and
/// `APIError+HTTP` the one place reasons become statuses). A service that means something
/// else by a constraint (a foreign key that names a missing parent: 404) catches it before
/// it gets here.
extension PostgresError: HTTPResponseConvertible {
    /// Seconds a client should wait before retrying after a 503.
    static let retryAfterSeconds = 2

    public var httpError: HTTPError { apiError.httpError }

    var apiError: APIError {
        switch sqlState {
        case .queryCanceled?:
            // The server cancelled a statement past statement_timeout (a lock wait, a slow
            // plan): this request's problem, and likely gone on a retry.
            return Self.unavailable("the database took too long; try again shortly")
        case _ where isUnavailable:
            return Self.unavailable("the database is unavailable; try again shortly")
        case .uniqueViolation?:
            return .conflict("that already exists")
        case .foreignKeyViolation?:
            return .conflict("that refers to something that does not exist")
        case .characterNotInRepertoire?, .invalidTextRepresentation?:
            return .malformed("text contains characters that cannot be stored (such as NUL)")
        case .serializationFailure?, .deadlockDetected?:
            // Only once withTransaction has retried it several times over.
            return Self.unavailable("the database is busy; try again shortly", retryAfterSeconds: 1)
        default:
            return APIError(.failed, "internal error")
        }
    }

    private static func unavailable(_ message: String, retryAfterSeconds: Int = retryAfterSeconds) -> APIError {
        APIError(.unavailable, message, retryAfter: retryAfterSeconds)
    }
}
