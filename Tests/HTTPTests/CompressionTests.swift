import Testing
import TestSupport
@testable import HTTP

/// gzip of JSON answers without sockets: what Accept-Encoding allows, the threshold, what
/// is never compressed, and that zlib's inflate gives the answer back.
@Suite struct CompressionTests {
    private func headers(_ acceptEncoding: String...) -> HTTPHeaders {
        HTTPHeaders(acceptEncoding.map { ("Accept-Encoding", $0) })
    }

    private func head(_ acceptEncoding: String?, method: HTTPMethod = .GET) -> RequestHead {
        RequestHead(method: method, target: "/api/posts", version: .http1_1,
                    headers: HTTPHeaders(acceptEncoding.map { [("Accept-Encoding", $0)] } ?? []),
                    framing: .none, keepAlive: true, expectsContinue: false)
    }

    /// A JSON body of `count` bytes that compresses well, as pages of posts do.
    private func json(_ count: Int) -> [UInt8] {
        let unit = Array(#"{"id":1,"title":"A title","body":"text"},"#.utf8)
        return Array((Array("[".utf8) + Array(repeating: unit, count: count / unit.count + 1).flatMap { $0 }).prefix(count))
    }

    @Test func acceptEncoding_qValuesDecide() {
        #expect(AcceptEncoding.allowsGzip(headers("gzip")))
        #expect(AcceptEncoding.allowsGzip(headers("br, gzip, deflate")))
        #expect(AcceptEncoding.allowsGzip(headers("GZIP;Q=0.5")))
        #expect(AcceptEncoding.allowsGzip(headers("x-gzip")))
        #expect(AcceptEncoding.allowsGzip(headers("*")))
        #expect(AcceptEncoding.allowsGzip(headers("identity", "gzip;q=1.0")))
        #expect(!AcceptEncoding.allowsGzip(HTTPHeaders()))
        #expect(!AcceptEncoding.allowsGzip(headers("")))
        #expect(!AcceptEncoding.allowsGzip(headers("identity")))
        #expect(!AcceptEncoding.allowsGzip(headers("br, deflate")))
        #expect(!AcceptEncoding.allowsGzip(headers("gzip;q=0")))
        #expect(!AcceptEncoding.allowsGzip(headers("gzip; q=0.000")))
        #expect(!AcceptEncoding.allowsGzip(headers("*, gzip;q=0")))
        #expect(!AcceptEncoding.allowsGzip(headers("*;q=0")))
        #expect(AcceptEncoding.allowsGzip(headers("*;q=0, gzip")))
        #expect(!AcceptEncoding.allowsGzip(headers("gzip;q=2")))
        #expect(!AcceptEncoding.allowsGzip(headers("gzip;q=abc")))
    }

    @Test func gzip_roundTripsThroughInflate() throws {
        for count in [0, 1, 1024, 200_000] {
            let body = json(count)
            let gzip = try #require(Gzip.compress(body))
            #expect(gzip.prefix(2) == [0x1f, 0x8b])
            #expect(gunzip(gzip) == body)
        }
    }

    @Test func json_atOrAboveTheThreshold_isGzipWhenAllowed() throws {
        let body = json(Response.compressionThreshold)
        let compressed = Response.json(body).compressed(for: head("gzip"))
        #expect(compressed.headers["Content-Encoding"] == "gzip")
        #expect(compressed.headers["Vary"] == "Accept-Encoding")
        let bytes = try #require(compressed.body.inlineBytes)
        #expect(bytes.count < body.count && gunzip(bytes) == body)
        let text = String(decoding: compressed.serializeHead(requestID: "r", date: "d", keepAlive: true, version: .http1_1),
                          as: UTF8.self)
        #expect(text.contains("\r\nContent-Length: \(bytes.count)\r\n"))
        // HEAD states the length GET would send.
        #expect(Response.json(body).compressed(for: head("gzip", method: .HEAD)).body.length == bytes.count)
    }

    @Test func json_belowTheThreshold_orNotAllowed_isPlain_butVaries() {
        for (body, accept) in [(json(Response.compressionThreshold - 1), "gzip"), (json(5000), nil), (json(5000), "gzip;q=0")] {
            let response = Response.json(body).compressed(for: head(accept))
            #expect(response.headers["Content-Encoding"] == nil)
            #expect(response.headers["Vary"] == "Accept-Encoding")
            #expect(response.body.inlineBytes == body)
        }
    }

    @Test func otherAnswers_areNeverCompressed() {
        let body = json(5000)
        let text = Response(headers: HTTPHeaders([("Content-Type", "text/plain")]), body: body).compressed(for: head("gzip"))
        #expect(text.headers["Content-Encoding"] == nil && text.headers["Vary"] == nil)
        let stream = Response(headers: HTTPHeaders([("Content-Type", "application/json")]),
                              body: .stream(ResponseStream { _ in })).compressed(for: head("gzip"))
        #expect(stream.headers["Content-Encoding"] == nil)
        let encoded = Response(headers: HTTPHeaders([("Content-Type", "application/json"), ("Content-Encoding", "br")]),
                               body: body).compressed(for: head("gzip"))
        #expect(encoded.headers.values(of: "Content-Encoding") == ["br"] && encoded.body.inlineBytes == body)
    }
}
