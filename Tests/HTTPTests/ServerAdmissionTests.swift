import Foundation
import HTTP
import Testing
import TestSupport

/// A route's `Admission` over real sockets: it decides from the head, on a worker, before
/// a body still to come is read; what it returns reaches the handler.
@Suite struct ServerAdmissionTests {
    /// Lets in requests that say `X-Pass: <name>` (handing the name on), refuses others with
    /// 401; `X-Slow` makes it block on `gate` until the test lets it go, as a slow database
    /// lookup would. One event loop, so a blocking admission on it would hold up every other
    /// connection. `admissions` counts the heads it was asked about.
    private static func start(gate: Gate? = nil, admissions: LockedCounter? = nil) throws -> Server {
        let admission = Admission { head, _ in
            _ = admissions?.next()
            if head.headers["X-Slow"] != nil { gate?.pass() }
            guard let name = head.headers["X-Pass"] else { throw HTTPError(.unauthorized, message: "no pass") }
            return name
        }
        return try TestHTTPServer.start(configure: { $0.ioThreads = 1 }, routes: { router in
            router.get("/ping", runsOnEventLoop: true) { _, _ in Response(body: Array("pong".utf8)) }
            router.post("/in", body: .collect(limit: 1 << 20), admission: admission) { request, context in
                Response(body: Array("\(context.admitted as? String ?? "-") \(request.body.count)".utf8))
            }
        })
    }

    @Test func aRefusal_isAnsweredFromTheHead() throws {
        let server = try Self.start()
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        // A megabyte announced, none sent: the answer must not wait for it.
        let response = try client.exchange("POST /in HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n")
        #expect(response.status == 401)
        #expect(response.header("Connection") == "close")
        #expect(client.waitForClose())
    }

    @Test func anAdmittedRequest_hasItsBodyRead_andItsValueReachesTheHandler() throws {
        let admissions = LockedCounter()
        let server = try Self.start(admissions: admissions)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        // The head alone first: admission runs before the body is there.
        try client.send("POST /in HTTP/1.1\r\nHost: t\r\nX-Pass: ash\r\nContent-Length: 5\r\n\r\n")
        #expect(eventually { admissions.count == 1 }, "admitted from the head alone")
        try client.send("hello")
        #expect(try client.readResponse().text == "ash 5")
        // Whole requests: admission runs with the handler, and the connection goes on.
        #expect(try client.exchange("POST /in HTTP/1.1\r\nHost: t\r\nX-Pass: brock\r\nContent-Length: 2\r\n\r\nhi").text == "brock 2")
        let refused = try client.exchange("POST /in HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi")
        #expect(refused.status == 401 && refused.header("Connection") == nil)
    }

    /// The ping is answered while the admission is still blocked (it was entered and not let
    /// go): no time bound to miss on a loaded machine.
    @Test func aBlockingAdmission_doesNotHoldUpTheLoop() throws {
        let gate = Gate()
        let server = try Self.start(gate: gate)
        defer { server.stop() }
        let slow = try RawHTTPClient(port: server.port)
        try slow.send("POST /in HTTP/1.1\r\nHost: t\r\nX-Slow: 1\r\nX-Pass: ash\r\nContent-Length: 5\r\n\r\n")
        try #require(gate.waitUntilEntered())
        #expect(try RawHTTPClient(port: server.port, timeout: .seconds(30)).exchange("GET /ping HTTP/1.1\r\nHost: t\r\n\r\n").text == "pong")
        gate.open()
        try slow.send("hello")
        #expect(try slow.readResponse().text == "ash 5")
    }
}
