import Foundation

/// A keep-alive client for the JSON API: builds requests from a method, a path, a JSON
/// object and headers, and reads each answer whole. Like any keep-alive client it does not
/// send on a connection the server has closed meanwhile (its idle timeout, or an answer
/// that said `Connection: close`): it connects again first. A request it has sent is never
/// sent again.
public final class APIClient: @unchecked Sendable {
    private var connection: RawHTTPClient
    private let port: Int
    private let timeout: Duration
    private var closing = false
    /// Sent with every request (`Authorization`, `X-User-Email`, …).
    public var headers: [String: String] = [:]

    /// `timeout` bounds each read of an answer.
    public init(port: Int, timeout: Duration = .seconds(5)) throws {
        connection = try RawHTTPClient(port: port, timeout: timeout)
        self.port = port
        self.timeout = timeout
    }

    @discardableResult
    public func get(_ path: String, headers extra: [String: String] = [:]) throws -> RawHTTPClient.Response {
        try send("GET", path, body: nil, contentType: nil, headers: extra)
    }

    @discardableResult
    public func send(_ method: String, _ path: String, json: [String: Any?]? = nil,
                     headers extra: [String: String] = [:]) throws -> RawHTTPClient.Response {
        let body = try json.map { fields in
            try JSONSerialization.data(withJSONObject: fields.mapValues { $0 ?? NSNull() })
        }
        return try send(method, path, body: body.map { Array($0) }, contentType: json == nil ? nil : "application/json",
                        headers: extra)
    }

    /// Raw body bytes of a given type (malformed JSON, forms).
    @discardableResult
    public func send(_ method: String, _ path: String, body: [UInt8]?, contentType: String?,
                     headers extra: [String: String] = [:]) throws -> RawHTTPClient.Response {
        // As a developer's client names the server: trust mode refuses other names (403).
        var head = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\n"
        for (name, value) in headers.merging(extra, uniquingKeysWith: { $1 }) { head += "\(name): \(value)\r\n" }
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        if closing || connection.isClosedByPeer {
            connection = try RawHTTPClient(port: port, timeout: timeout)
        }
        try connection.send(Array((head + "\r\n").utf8) + (body ?? []))
        let response = try connection.readResponse(forHead: method == "HEAD")
        closing = response.header("Connection")?.lowercased() == "close"
        return response
    }
}
