/// A complete request as a handler sees it.
public struct Request: Sendable {
    public let head: RequestHead
    public let content: RequestBody
    /// The decoded query parameters.
    public let query: QueryParameters

    public var method: HTTPMethod { head.method }
    public var headers: HTTPHeaders { head.headers }
    /// The path as sent (still percent-encoded), without the query.
    public var path: Substring { head.path }

    /// The collected body (JSON, urlencoded forms); empty for other bodies.
    public var body: [UInt8] {
        if case .bytes(let bytes) = content { return bytes }
        return []
    }

    /// The multipart form, when the body was one.
    public var form: MultipartForm? {
        if case .form(let form) = content { return form }
        return nil
    }

    /// Fails with 400 when the query is not well-formed.
    public init(head: RequestHead, content: RequestBody = .empty) throws(HTTPError) {
        self.head = head
        self.content = content
        if let query = head.query {
            guard let parsed = QueryParameters(parsing: query) else {
                throw HTTPError(.badRequest, message: "malformed query string")
            }
            self.query = parsed
        } else {
            self.query = QueryParameters()
        }
    }

    public init(head: RequestHead, body: [UInt8]) throws(HTTPError) {
        try self.init(head: head, content: .bytes(body))
    }
}
