import Dispatch
import Synchronization
import Foundation
import HTTP
import Testing
import TestSupport

/// A consumer that looks at a body's first bytes, as an image upload does: not a PNG → 415
/// at once, before the rest of the body is read. It holds only a count.
private struct PNGCountingConsumer: BodyConsumer {
    let limit = 11 * 1024 * 1024
    private var signature: [UInt8] = []
    private var count = 0

    mutating func prepare(declaredLength: Int?) -> Int { 64 }

    mutating func consume(_ piece: ArraySlice<UInt8>) throws(HTTPError) {
        if signature.count < 4 {
            signature += piece.prefix(4 - signature.count)
            if signature.count == 4 && signature != [0x89, 0x50, 0x4E, 0x47] {
                throw HTTPError(.unsupportedMediaType, message: "not a PNG")
            }
        }
        count += piece.count
    }

    mutating func finish() throws(HTTPError) -> RequestBody { .bytes(Array("\(count)".utf8)) }
}

/// Request bodies over real sockets: consumers, bodies nobody reads, the memory budget and
/// the connection cap.
@Suite struct ServerBodyTests {
    private static func routes(_ router: inout Router) {
        router.get("/api/ping") { _, _ in Response(body: Array("pong".utf8)) }
        router.post("/png", body: BodyPolicy { _ in PNGCountingConsumer() }) { request, _ in Response(body: request.body) }
    }

    @Test func bodyOnAnUnknownRoute_isAnsweredWithoutReadingIt() throws {
        let server = try TestHTTPServer.start(routes: Self.routes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        // Ten megabytes announced, none sent: the answer must not wait for them.
        let response = try client.exchange("POST /nowhere HTTP/1.1\r\nHost: t\r\nContent-Length: 10000000\r\n\r\n")
        #expect(response.status == 404)
        #expect(response.header("Connection") == "close")
        #expect(client.waitForClose())
    }

    @Test func smallBodyOnARouteThatTakesNone_isPassedOverAndTheConnectionGoesOn() throws {
        let server = try TestHTTPServer.start(routes: Self.routes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello")
        #expect(response.text == "pong")
        #expect(response.header("Connection") == nil)
        #expect(try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").text == "pong")
    }

    @Test func largeUnsentBodyOnARouteThatTakesNone_isAnsweredThenClosed() throws {
        let server = try TestHTTPServer.start(routes: Self.routes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(response.text == "pong")
        #expect(response.header("Connection") == "close")
        #expect(client.waitForClose())
    }

    @Test func consumerRefusingTheFirstBytes_answersAtOnce() throws {
        let server = try TestHTTPServer.start(routes: Self.routes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /png HTTP/1.1\r\nHost: t\r\nContent-Length: 10000000\r\n\r\nGIF89a-and-so-on")
        let response = try client.readResponse()
        #expect(response.status == 415)
        #expect(response.json["error"] as? String == "unsupported_media_type")
        #expect(client.waitForClose())
    }

    @Test func consumerAcceptingTheBody_seesAllOfItInPieces() throws {
        let server = try TestHTTPServer.start(routes: Self.routes)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let size = 3 * 1024 * 1024
        var body = [UInt8](repeating: 0xAB, count: size)
        body.replaceSubrange(0..<4, with: [0x89, 0x50, 0x4E, 0x47])
        try client.send(Array("POST /png HTTP/1.1\r\nHost: t\r\nContent-Length: \(size)\r\n\r\n".utf8) + body)
        #expect(try client.readResponse().text == "\(size)")
        #expect(server.bodyMemoryInUse == 0)
    }

    /// With the budget spent, a second body waits (its reading paused, no error) until the
    /// first gives its memory back, then completes.
    @Test func spentBodyBudget_pausesReadingUntilMemoryFrees() throws {
        let gates = [Gate(), Gate()]
        let calls = LockedCounter()
        let server = try TestHTTPServer.start(configure: { $0.maxBodyMemory = 64 * 1024 }, routes: { router in
            router.post("/hold", bodyLimit: 64 * 1024) { request, _ in
                gates[calls.next() % 2].pass()
                return Response(body: Array("\(request.body.count)".utf8))
            }
        })
        defer { server.stop() }
        let body = String(repeating: "x", count: 40 * 1024)
        let first = try RawHTTPClient(port: server.port)
        try first.send("POST /hold HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        try #require(gates[0].waitUntilEntered())
        #expect(server.bodyMemoryInUse == 40 * 1024)

        let second = try RawHTTPClient(port: server.port)
        try second.send("POST /hold HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        try #require(eventually { server.bodiesWaitingForMemory == 1 })
        #expect(server.bodyMemoryInUse <= 64 * 1024)

        gates[0].open()
        #expect(try first.readResponse().text == "\(40 * 1024)")
        try #require(gates[1].waitUntilEntered())
        gates[1].open()
        #expect(try second.readResponse().text == "\(40 * 1024)")
        #expect(server.bodyMemoryInUse == 0)
    }

    /// Memory that stays spent does not leave a body waiting forever: it gets a 503 once it
    /// has waited the grace period.
    @Test func bodyWaitingTooLongForMemory_gets503() throws {
        let gate = Gate()
        let server = try TestHTTPServer.start(configure: {
            $0.maxBodyMemory = 64 * 1024
            $0.bodyGracePeriod = .milliseconds(300)
        }, routes: { router in
            router.post("/hold", bodyLimit: 64 * 1024) { _, _ in
                gate.pass()
                return Response()
            }
        })
        defer { server.stop() }
        let body = String(repeating: "x", count: 40 * 1024)
        let holder = try RawHTTPClient(port: server.port)
        try holder.send("POST /hold HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        try #require(gate.waitUntilEntered())
        let waiter = try RawHTTPClient(port: server.port)
        try waiter.send("POST /hold HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        let response = try waiter.readResponse()
        #expect(response.status == 503)
        #expect(response.header("Retry-After") == "1")
        #expect(server.bodiesWaitingForMemory == 0)
        gate.open()
        #expect(try holder.readResponse().status == 200)
    }

    @Test func connectionsPastTheCap_areClosedAtOnceAndServiceGoesOn() throws {
        let server = try TestHTTPServer.start(configure: { $0.maxConnections = 3 }, routes: Self.routes)
        defer { server.stop() }
        var open: [RawHTTPClient] = []
        for _ in 0..<3 {
            let client = try RawHTTPClient(port: server.port)
            #expect(try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
            open.append(client)
        }
        let excess = try RawHTTPClient(port: server.port)
        #expect(excess.waitForClose())
        #expect(server.refusedConnections == 1)
        open.removeFirst()
        try #require(eventually { server.openConnections == 2 })
        let next = try RawHTTPClient(port: server.port)
        #expect(try next.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
    }
}

/// A thread-safe call counter for handlers.
final class LockedCounter: Sendable {
    private let value = Mutex<Int>(0)

    func next() -> Int {
        value.withLock { value in
            defer { value += 1 }
            return value
        }
    }

    /// How many `next()` there were.
    var count: Int { value.withLock { $0 } }
}
