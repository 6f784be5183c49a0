/// What the parser knows once a request's head is complete: the request line, the
/// fields, and how the body is framed.
public struct RequestHead: Sendable, Equatable {
    public enum Version: Sendable, Equatable { case http1_0, http1_1 }

    public enum BodyFraming: Sendable, Equatable {
        case none
        case contentLength(Int)
        case chunked
    }

    public var method: HTTPMethod
    /// The request target as sent (origin-form; absolute-form is reduced to it).
    public var target: String
    public var version: Version
    public var headers: HTTPHeaders
    public var framing: BodyFraming
    /// Whether the connection may serve another request after this one.
    public var keepAlive: Bool
    /// The client waits for `100 Continue` before it sends the body.
    public var expectsContinue: Bool

    /// The target's path, still percent-encoded.
    public var path: Substring {
        target.firstIndex(of: "?").map { target[..<$0] } ?? Substring(target)
    }

    /// The target's query, without the `?`, still percent-encoded.
    public var query: Substring? {
        target.firstIndex(of: "?").map { target[target.index(after: $0)...] }
    }

    /// Whether a body follows the head at all.
    public var hasBody: Bool {
        switch framing {
        case .none: false
        case .contentLength(let length): length > 0
        case .chunked: true
        }
    }
}
