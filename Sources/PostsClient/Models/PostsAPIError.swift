import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An error answer of the server (API.md "Errors": `{"status":"error","error":<code>,
/// "message":<text>}` with its HTTP status), thrown by every call that gets one.
public struct PostsAPIError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The HTTP status (404, 422, …).
    public let status: Int
    /// The envelope's machine-readable `error` code.
    public let code: Code
    /// The server's human text: fine to log, not meant for end users as is.
    public let message: String
    /// From `Retry-After` (429, 503, and 409 while an idempotent request still runs).
    public let retryAfter: Duration?
    /// The `X-Request-Id` of the answer, to quote when reporting a problem.
    public let requestID: String?

    public init(status: Int, code: Code, message: String, retryAfter: Duration? = nil, requestID: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.requestID = requestID
    }

    /// API.md's codes; open-ended like the server's table.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let badRequest = Code(rawValue: "bad_request")
        public static let unauthorized = Code(rawValue: "unauthorized")
        public static let forbidden = Code(rawValue: "forbidden")
        public static let notFound = Code(rawValue: "not_found")
        public static let methodNotAllowed = Code(rawValue: "method_not_allowed")
        public static let requestTimeout = Code(rawValue: "request_timeout")
        public static let conflict = Code(rawValue: "conflict")
        public static let gone = Code(rawValue: "gone")
        public static let payloadTooLarge = Code(rawValue: "payload_too_large")
        public static let uriTooLong = Code(rawValue: "uri_too_long")
        public static let unsupportedMediaType = Code(rawValue: "unsupported_media_type")
        public static let validationFailed = Code(rawValue: "validation_failed")
        public static let rateLimited = Code(rawValue: "rate_limited")
        public static let headersTooLarge = Code(rawValue: "headers_too_large")
        public static let unavailable = Code(rawValue: "unavailable")
        public static let `internal` = Code(rawValue: "internal")
    }

    public var description: String { "\(status) \(code): \(message)" }
    public var errorDescription: String? { message }

    /// The error of an answer outside 2xx. A body that is not the envelope (a proxy's page)
    /// still gives an error with the status, so nothing is lost.
    init(response: HTTPURLResponse, body: Data) {
        struct Envelope: Decodable {
            let error: String?
            let message: String?
        }
        let envelope = try? JSONDecoder().decode(Envelope.self, from: body)
        let text = String(decoding: body.prefix(512), as: UTF8.self)
        self.init(status: response.statusCode,
                  code: envelope?.error.map(Code.init(rawValue:)) ?? Code(rawValue: "http_\(response.statusCode)"),
                  message: envelope?.message ?? (text.isEmpty ? HTTPURLResponse.localizedString(forStatusCode: response.statusCode) : text),
                  retryAfter: Self.retryAfter(response.value(forHTTPHeaderField: "Retry-After")),
                  requestID: response.value(forHTTPHeaderField: "X-Request-Id"))
    }

    /// `Retry-After` in seconds (the form the server writes); nil for anything else.
    static func retryAfter(_ header: String?) -> Duration? {
        guard let header, let seconds = Int(header.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return nil }
        return .seconds(seconds)
    }
}
