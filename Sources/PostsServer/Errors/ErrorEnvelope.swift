import HTTP

/// API.md's error answer, `{"status":"error","error":<code>,"message":<text>}`, and its
/// table of codes by status: the one place either is written. The server renders every
/// error through it (`ServerConfiguration.errorRenderer`), its own refusals (408, 413,
/// 431) included.
public enum ErrorEnvelope {
    public static let renderer = ErrorRenderer { error in
        response(status: error.status, code: error.code ?? code(for: error.status), message: error.message)
    }

    /// API.md's `error` code for a status; `internal` for any status the table lacks.
    public static func code(for status: HTTPStatus) -> String {
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

    private static func response(status: HTTPStatus, code: String, message: String) -> Response {
        var body: [UInt8] = []
        body.reserveCapacity(64 + message.utf8.count)
        body.append(contentsOf: #"{"status":"error","error":"#.utf8)
        JSONText.appendQuoted(code, to: &body)
        body.append(contentsOf: #","message":"#.utf8)
        JSONText.appendQuoted(message, to: &body)
        body.append(UInt8(ascii: "}"))
        return Response.json(body, status: status)
    }
}
