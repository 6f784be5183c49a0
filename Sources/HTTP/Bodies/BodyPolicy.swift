/// How a route takes request bodies: decided per request from its head, so one route can
/// take JSON (collected) and multipart (streamed) alike, or refuse a type with 415 before
/// reading a byte.
public struct BodyPolicy: Sendable {
    /// The consumer for this request's body, or nil when the route takes no body (then a
    /// body is left unread: the answer goes out at once and the connection closes if the
    /// body would have had to be skipped).
    public typealias MakeConsumer = @Sendable (RequestHead) throws(HTTPError) -> (any BodyConsumer)?

    let makeConsumer: MakeConsumer

    public init(_ makeConsumer: @escaping MakeConsumer) {
        self.makeConsumer = makeConsumer
    }

    /// The route takes no body (GET, DELETE, a like).
    public static let none = BodyPolicy { _ in nil }

    /// The body is collected in memory up to `limit` bytes.
    public static func collect(limit: Int) -> BodyPolicy {
        BodyPolicy { _ in CollectingBodyConsumer(limit: limit) }
    }
}
