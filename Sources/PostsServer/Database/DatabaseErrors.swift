import HTTP
import Postgres

/// How database failures look to clients: the one place SQLSTATEs become statuses.
/// A service that means something else by a constraint (a foreign key that names a
/// missing parent: 404) catches it before it gets here.
extension PostgresError: HTTPResponseConvertible {
    /// Seconds a client should wait before retrying after a 503.
    static let retryAfterSeconds = 2

    public var httpError: HTTPError {
        if isUnavailable {
            return HTTPError(.serviceUnavailable, message: "the database is unavailable; try again shortly",
                             headers: HTTPHeaders([("Retry-After", "\(Self.retryAfterSeconds)")]))
        }
        switch sqlState {
        case .uniqueViolation?:
            return HTTPError(.conflict, message: "that already exists")
        case .foreignKeyViolation?:
            return HTTPError(.conflict, message: "that refers to something that does not exist")
        case .characterNotInRepertoire?, .invalidTextRepresentation?:
            return HTTPError(.badRequest, message: "text contains characters that cannot be stored (such as NUL)")
        case .serializationFailure?, .deadlockDetected?:
            return HTTPError(.serviceUnavailable, message: "the database is busy; try again shortly",
                             headers: HTTPHeaders([("Retry-After", "1")]))
        default:
            return HTTPError(.internalServerError, message: "internal error")
        }
    }
}
