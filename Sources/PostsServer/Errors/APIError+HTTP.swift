import HTTP

/// Each reason's status; its `error` code is the one `ErrorEnvelope` gives that status
/// (API.md's table, written once). Routes and stages throw `APIError`s; the server renders
/// whatever `HTTPResponseConvertible` gives it.
extension APIError: HTTPResponseConvertible {
    var httpError: HTTPError {
        let status: HTTPStatus = switch reason {
        case .malformed: .badRequest
        case .unauthenticated: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .conflict: .conflict
        case .gone: .gone
        case .unsupportedMedia: .unsupportedMediaType
        case .invalid: .unprocessableEntity
        case .tooManyRequests: .tooManyRequests
        case .unavailable: .serviceUnavailable
        case .failed: .internalServerError
        }
        var headers = HTTPHeaders()
        if let retryAfter { headers.add("Retry-After", "\(retryAfter)") }
        return HTTPError(status, message: message, headers: headers)
    }
}
