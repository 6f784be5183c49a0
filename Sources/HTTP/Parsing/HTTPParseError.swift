/// Why bytes from a client cannot be a request. Every case is answered with its status and
/// the connection is closed: after a framing error nothing that follows can be trusted.
public enum HTTPParseError: Error, Sendable, Equatable {
    case badRequest(String)
    case uriTooLong
    case headersTooLarge
    case payloadTooLarge

    public var status: HTTPStatus {
        switch self {
        case .badRequest: .badRequest
        case .uriTooLong: .uriTooLong
        case .headersTooLarge: .headersTooLarge
        case .payloadTooLarge: .payloadTooLarge
        }
    }

    public var message: String {
        switch self {
        case .badRequest(let reason): reason
        case .uriTooLong: "request target is too long"
        case .headersTooLarge: "request head is too large"
        case .payloadTooLarge: "request body is larger than this route accepts"
        }
    }
}
