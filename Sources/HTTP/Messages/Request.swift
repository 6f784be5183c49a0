/// A complete request as a handler sees it.
public struct Request: Sendable {
    public let head: RequestHead
    public let body: [UInt8]
    /// The decoded query parameters.
    public let query: QueryParameters

    public var method: HTTPMethod { head.method }
    public var headers: HTTPHeaders { head.headers }
    /// The path as sent (still percent-encoded), without the query.
    public var path: Substring { head.path }

    /// Fails with 400 when the query is not well-formed.
    public init(head: RequestHead, body: [UInt8]) throws(HTTPError) {
        self.head = head
        self.body = body
        if let query = head.query {
            guard let parsed = QueryParameters(parsing: query) else {
                throw HTTPError(.badRequest, message: "malformed query string")
            }
            self.query = parsed
        } else {
            self.query = QueryParameters()
        }
    }
}
