import Foundation
import Testing
@testable import HTTP

/// How each kind of response body frames its head, without sockets.
@Suite struct ResponseTests {
    private func head(_ response: Response, keepAlive: Bool = true, version: RequestHead.Version = .http1_1) -> String {
        String(decoding: response.serializeHead(requestID: "r1", date: "Sun, 06 Nov 1994 08:49:37 GMT",
                                                keepAlive: keepAlive, version: version), as: UTF8.self)
    }

    private static let stream = ResponseStream { _ in }

    @Test func bytes_stateTheirLength() {
        let text = head(Response.json(Array("{}".utf8)))
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"))
        #expect(text.contains("\r\nContent-Length: 2\r\n"))
        #expect(text.contains("\r\nX-Request-Id: r1\r\n"))
        #expect(text.hasSuffix("\r\n\r\n"))
        #expect(!text.contains("Connection:"))
    }

    @Test func file_statesTheFilesLength() throws {
        let path = NSTemporaryDirectory() + "posts-server-response-\(UUID().uuidString)"
        try Data(repeating: 1, count: 1234).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = try #require(FileBody.open(path: path))
        #expect(head(Response(body: .file(file))).contains("\r\nContent-Length: 1234\r\n"))
    }

    @Test func stream_isChunkedOnHTTP11_andUnframedOnHTTP10() {
        let response = Response(body: .stream(Self.stream))
        let chunked = head(response)
        #expect(chunked.contains("\r\nTransfer-Encoding: chunked\r\n") && !chunked.contains("Content-Length"))
        #expect(response.canKeepAlive(version: .http1_1))
        let unframed = head(response, keepAlive: false, version: .http1_0)
        #expect(!unframed.contains("Transfer-Encoding") && !unframed.contains("Content-Length"))
        #expect(unframed.contains("\r\nConnection: close\r\n"))
        #expect(!response.canKeepAlive(version: .http1_0))
    }

    @Test func statusesWithoutABody_stateNoLength() {
        let text = head(Response(status: .notModified, body: Array("ignored".utf8)))
        #expect(text.hasPrefix("HTTP/1.1 304 Not Modified\r\n"))
        #expect(!text.contains("Content-Length") && !text.contains("Transfer-Encoding"))
    }

    @Test func connectionHeader_followsKeepAliveAndVersion() {
        #expect(head(Response(), keepAlive: false).contains("\r\nConnection: close\r\n"))
        #expect(head(Response(), version: .http1_0).contains("\r\nConnection: keep-alive\r\n"))
    }
}
