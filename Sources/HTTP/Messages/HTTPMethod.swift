/// A request method token, as sent (methods are case-sensitive, RFC 9110 §9.1).
public struct HTTPMethod: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    public static let GET = HTTPMethod("GET")
    public static let HEAD = HTTPMethod("HEAD")
    public static let POST = HTTPMethod("POST")
    public static let PUT = HTTPMethod("PUT")
    public static let PATCH = HTTPMethod("PATCH")
    public static let DELETE = HTTPMethod("DELETE")
    public static let OPTIONS = HTTPMethod("OPTIONS")
}
