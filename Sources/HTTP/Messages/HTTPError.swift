/// An error that knows its HTTP form: thrown by handlers (or by the server itself) and
/// rendered as API.md's envelope `{"status":"error","error":…,"message":…}`.
public struct HTTPError: Error, Sendable, Equatable {
    public var status: HTTPStatus
    /// The envelope's `error` code (`not_found`, `bad_request`, …).
    public var code: String
    public var message: String
    public var headers: HTTPHeaders

    public init(_ status: HTTPStatus, code: String? = nil, message: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.code = code ?? Self.defaultCode(for: status)
        self.message = message
        self.headers = headers
    }

    public static func notFound(_ message: String = "not found") -> HTTPError {
        HTTPError(.notFound, message: message)
    }

    public static func badRequest(_ message: String) -> HTTPError {
        HTTPError(.badRequest, message: message)
    }

    public func makeResponse() -> Response {
        var body: [UInt8] = []
        body.reserveCapacity(64 + message.utf8.count)
        body.append(contentsOf: #"{"status":"error","error":"#.utf8)
        JSONText.appendQuoted(code, to: &body)
        body.append(contentsOf: #","message":"#.utf8)
        JSONText.appendQuoted(message, to: &body)
        body.append(UInt8(ascii: "}"))
        var response = Response.json(body, status: status)
        for field in headers { response.headers.add(field.name, field.value) }
        return response
    }

    static func defaultCode(for status: HTTPStatus) -> String {
        switch status.code {
        case 400: "bad_request"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "not_found"
        case 405: "method_not_allowed"
        case 408: "request_timeout"
        case 409: "conflict"
        case 410: "gone"
        case 413: "payload_too_large"
        case 414: "uri_too_long"
        case 415: "unsupported_media_type"
        case 422: "validation_failed"
        case 429: "rate_limited"
        case 431: "headers_too_large"
        case 503: "unavailable"
        default: "internal"
        }
    }
}

extension HTTPError {
    init(_ error: HTTPParseError) {
        self.init(error.status, code: error.code, message: error.message)
    }
}

/// An error from another layer that knows which HTTP error it means. The application
/// conforms its errors (the database's, say) in one place; the server renders them.
public protocol HTTPResponseConvertible: Error {
    var httpError: HTTPError { get }
}
