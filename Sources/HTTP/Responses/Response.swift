/// A response as a handler returns it; the server adds framing headers when it writes it.
public struct Response: Sendable {
    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var body: ResponseBody
    /// No answer at all: the connection is closed without a byte of it (a fault an app's
    /// test suite asked for, `Response.dropConnection`).
    public var dropsConnection = false

    /// The answer that is none: the client sees its connection closed.
    public static var dropConnection: Response {
        var response = Response(status: .ok)
        response.dropsConnection = true
        return response
    }

    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.init(status: status, headers: headers, body: .bytes(body))
    }

    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: ResponseBody) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static let jsonContentType = "application/json; charset=utf-8"

    public static func json(_ body: [UInt8], status: HTTPStatus = .ok) -> Response {
        Response(status: status, headers: HTTPHeaders([("Content-Type", jsonContentType)]), body: body)
    }

    /// The status line and header fields, ending with the empty line. `Content-Length`
    /// always states the full body's length, also for HEAD, whose body is left out (RFC 9110
    /// §9.3.2). A stream has no length: it is chunked, or (HTTP/1.0) ends with the connection.
    func serializeHead(requestID: String, date: String, keepAlive: Bool, version: RequestHead.Version) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + (body.inlineBytes?.count ?? 0))
        out.append(contentsOf: "HTTP/1.1 \(status.code) \(status.reason)\r\n".utf8)
        for field in headers {
            out.append(contentsOf: field.name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: field.value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        if !status.forbidsBody {
            if let length = body.length {
                out.append(contentsOf: "Content-Length: \(length)\r\n".utf8)
            } else if version == .http1_1 {
                out.append(contentsOf: "Transfer-Encoding: chunked\r\n".utf8)
            }
        }
        out.append(contentsOf: "Date: \(date)\r\nX-Request-Id: \(requestID)\r\n".utf8)
        if !keepAlive {
            out.append(contentsOf: "Connection: close\r\n".utf8)
        } else if version == .http1_0 {
            out.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        out.append(contentsOf: "\r\n".utf8)
        return out
    }

    /// Whether a stream response can keep its connection: only when chunked framing tells
    /// the client where it ends.
    func canKeepAlive(version: RequestHead.Version) -> Bool {
        body.length != nil || status.forbidsBody || version == .http1_1
    }
}
