import HTTP

/// API.md's error table: each reason's status and `error` code. Routes and stages throw
/// `APIError`s; the server renders whatever `HTTPResponseConvertible` gives it.
extension APIError: HTTPResponseConvertible {
    var httpError: HTTPError {
        let (status, code): (HTTPStatus, String) = switch reason {
        case .malformed: (.badRequest, "bad_request")
        case .unauthenticated: (.unauthorized, "unauthorized")
        case .forbidden: (.forbidden, "forbidden")
        case .notFound: (.notFound, "not_found")
        case .conflict: (.conflict, "conflict")
        case .gone: (.gone, "gone")
        case .unsupportedMedia: (.unsupportedMediaType, "unsupported_media_type")
        case .invalid: (.unprocessableEntity, "validation_failed")
        case .tooManyRequests: (.tooManyRequests, "rate_limited")
        case .unavailable: (.serviceUnavailable, "unavailable")
        case .failed: (.internalServerError, "internal")
        }
        var headers = HTTPHeaders()
        if let retryAfter { headers.add("Retry-After", "\(retryAfter)") }
        return HTTPError(status, code: code, message: message, headers: headers)
    }
}
