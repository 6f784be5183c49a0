import Dispatch
import Foundation
import HTTP
import Synchronization
import Testing
import TestSupport

/// The server over real loopback sockets.
@Suite struct ServerTests {
    private static func echoRoutes(_ router: inout Router) {
        router.get("/api/ping") { _, _ in Response.json(Array(#"{"status":"success","message":"pong"}"#.utf8)) }
        router.post("/echo", bodyLimit: 1024) { request, _ in
            Response(status: .ok, headers: HTTPHeaders([("Content-Type", "text/plain")]), body: request.body)
        }
        router.get("/items/:id") { _, context in
            let id = try context.parameters.require("id", as: Int64.self)
            return Response(body: Array("item \(id)".utf8))
        }
        router.get("/fail") { _, _ in throw CocoaError(.fileNoSuchFile) }
    }

    @Test func ping_answersWithFramingHeaders() throws {
        let server = try TestHTTPServer.start(routes: Self.echoRoutes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(response.status == 200)
        #expect(response.json["message"] as? String == "pong")
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        #expect(response.header("Content-Length") == "37")
        #expect(response.header("Date")?.hasSuffix("GMT") == true)
        #expect(response.header("X-Request-Id")?.count == 16)
    }

    @Test func requestID_isEchoed() throws {
        let server = try TestHTTPServer.start(routes: Self.echoRoutes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\nX-Request-Id: abc-123\r\n\r\n")
        #expect(response.header("X-Request-Id") == "abc-123")
    }

    @Test func keepAlive_reusesTheConnection() throws {
        let server = try TestHTTPServer.start(routes: Self.echoRoutes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        for index in 0..<50 {
            let response = try client.exchange("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(String(index).count)\r\n\r\n\(index)")
            #expect(response.text == "\(index)")
        }
        let last = try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(last.header("Connection") == "close")
        #expect(client.waitForClose())
    }

    /// A connection is closed after its `maxRequestsPerConnection`-th answer, which says so.
    @Test func connection_closesAfterItsLastAllowedRequest() throws {
        let server = try TestHTTPServer.start(configure: { $0.maxRequestsPerConnection = 3 }, routes: Self.echoRoutes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        for _ in 0..<2 {
            let response = try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(response.status == 200)
            #expect(response.header("Connection") != "close")
        }
        let last = try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(last.status == 200)
        #expect(last.header("Connection") == "close")
        #expect(client.waitForClose())
        // A new connection starts a new count.
        #expect(try RawHTTPClient(port: server.port).exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
    }

    @Test func http10_closesUnlessKeepAliveAsked() throws {
        let server = try TestHTTPServer.start(routes: Self.echoRoutes)
        defer { server.stop() }
        let keep = try RawHTTPClient(port: server.port)
        #expect(try keep.exchange("GET /api/ping HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").header("Connection") == "keep-alive")
        #expect(try keep.exchange("GET /api/ping HTTP/1.0\r\n\r\n").status == 200)
        #expect(keep.waitForClose())
    }

    @Test func pipelinedRequests_areAnsweredInOrder() throws {
        let server = try TestHTTPServer.start(routes: Self.echoRoutes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        var batch = ""
        for index in 0..<20 {
            batch += "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \(String(index).count)\r\n\r\n\(index)"
        }
        try client.send(batch + "GET /items/7 HTTP/1.1\r\nHost: t\r\n\r\n")
        for index in 0..<20 { #expect(try client.readResponse().text == "\(index)") }
        #expect(try client.readResponse().text == "item 7")
    }

    @Test func pipelinedRequestsThenHalfClose_areAllAnswered() throws {
        let server = try TestHTTPServer.start(routes: Self.echoRoutes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /items/1 HTTP/1.1\r\nHost: t\r\n\r\nGET /items/2 HTTP/1.1\r\nHost: t\r\n\r\n")
        client.shutdownWrite()
        #expect(try client.readResponse().text == "item 1")
        #expect(try client.readResponse().text == "item 2")
        #expect(client.waitForClose())
    }

    @Test func expectContinue_getsInterimResponseThenFinal() throws {
        let server = try TestHTTPServer.start(routes: Self.echoRoutes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        #expect(try client.readResponse().status == 100)
        try client.send("hello")
        #expect(try client.readResponse().text == "hello")
    }

    @Test func expectContinue_overLimit_gets413WithoutContinue() throws {
        let server = try TestHTTPServer.start(routes: Self.echoRoutes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(response.json["error"] as? String == "payload_too_large")
        #expect(client.waitForClose())
    }

    @Test func bodyOverRouteLimit_is413BeforeTheBodyIsSent() throws {
        let server = try TestHTTPServer.start(routes: Self.echoRoutes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        // The body never comes: the answer must not wait for it.
        let response = try client.exchange("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n\r\n")
        #expect(response.status == 413)
        #expect(response.header("Connection") == "close")
        #expect(client.waitForClose())
    }

    @Test func chunkedBodyOverLimit_is413() throws {
        let server = try TestHTTPServer.start(routes: Self.echoRoutes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let chunk = String(repeating: "a", count: 600)
        let response = try client.exchange("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n")
        #expect(response.status == 413)
    }

    @Test func chunkedBody_isEchoed() throws {
        let server = try TestHTTPServer.start(routes: Self.echoRoutes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.exchange("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n")
        #expect(response.text == "abcde")
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: t\r\nBad Header\r\n\r\n", 400, "bad_request"),
        ("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "bad_request"),
        ("GET /\(String(repeating: "a", count: 9000)) HTTP/1.1\r\nHost: t\r\n\r\n", 414, "uri_too_long"),
        ("GET / HTTP/1.1\r\nHost: t\r\n\(String(repeating: "X-Pad: \(String(repeating: "p", count: 1000))\r\n", count: 17))\r\n", 431, "headers_too_large"),
    ])
    func badRequests_getTheirStatusThenClose(_ request: String, _ status: Int, _ code: String) throws {
        let server = try TestHTTPServer.start(routes: Self.echoRoutes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.exchange(request)
        #expect(response.status == status)
        #expect(response.json["error"] as? String == code)
        #expect(client.waitForClose())
        // The server keeps serving others.
        #expect(try RawHTTPClient(port: server.port).exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
    }

    @Test func routingErrors_useTheEnvelope() throws {
        let server = try TestHTTPServer.start(routes: Self.echoRoutes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let missing = try client.exchange("GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(missing.status == 404)
        #expect(missing.json["error"] as? String == "not_found")
        let wrongMethod = try client.exchange("DELETE /api/ping HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow") == "GET, HEAD")
        #expect(try client.exchange("GET /items/abc HTTP/1.1\r\nHost: t\r\n\r\n").status == 404)
        let broken = try client.exchange("GET /fail HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(broken.status == 500)
        #expect(broken.json["message"] as? String == "internal error")
        let badQuery = try client.exchange("GET /items/1?x=%zz HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(badQuery.status == 400)
        let head = try client.exchange("HEAD /api/ping HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == "37")
    }

    @Test func ipv6Loopback_isServed() throws {
        let server = try TestHTTPServer.start(host: "::1", routes: Self.echoRoutes)
        defer { server.stop() }
        #expect(server.baseURL.hasPrefix("http://[::1]:"))
        let client = try RawHTTPClient(port: server.port, host: "::1")
        #expect(try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
    }
}

@Suite struct ServerLargeBodyTests {
    /// A body far beyond one read buffer arrives in pieces and is still assembled whole.
    @Test func largeBody_isAssembledAcrossManyReads() throws {
        let server = try TestHTTPServer.start(routes: { router in
            router.post("/size", bodyLimit: 11 * 1024 * 1024) { request, _ in
                Response(body: Array("\(request.body.count) \(request.body.last ?? 0)".utf8))
            }
        })
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let size = 10 * 1024 * 1024
        var body = [UInt8](repeating: UInt8(ascii: "a"), count: size)
        body[size - 1] = UInt8(ascii: "z")
        try client.send(Array("POST /size HTTP/1.1\r\nHost: t\r\nContent-Length: \(size)\r\n\r\n".utf8) + body)
        #expect(try client.readResponse().text == "\(size) \(UInt8(ascii: "z"))")
    }
}
