/// An error that knows its HTTP form: thrown by handlers (or by the server itself) and
/// rendered by the server's `ErrorRenderer`, which the application supplies (its envelope
/// and its table of codes are its own business, not this module's).
public struct HTTPError: Error, Sendable, Equatable {
    public var status: HTTPStatus
    /// The machine-readable code, when the thrower names one; nil lets the renderer pick
    /// the code its table gives the status.
    public var code: String?
    public var message: String
    public var headers: HTTPHeaders

    public init(_ status: HTTPStatus, code: String? = nil, message: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    public static func notFound(_ message: String = "not found") -> HTTPError {
        HTTPError(.notFound, message: message)
    }

    public static func badRequest(_ message: String) -> HTTPError {
        HTTPError(.badRequest, message: message)
    }
}

extension HTTPError {
    init(_ error: HTTPParseError) {
        self.init(error.status, message: error.message)
    }
}

/// An error from another layer that knows which HTTP error it means. The application
/// conforms its errors (the database's, say) in one place; the server renders them.
public protocol HTTPResponseConvertible: Error {
    var httpError: HTTPError { get }
}
