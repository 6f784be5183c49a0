import Dispatch
import Foundation
import HTTP
import Testing
import TestSupport

/// A stop (SIGTERM) as a deploy sees it: nothing that had started is lost.
@Suite struct ServerDrainTests {
    private static func stopInBackground(_ server: Server) -> DispatchSemaphore {
        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            server.stop()
            stopped.signal()
        }
        return stopped
    }

    @Test func stop_finishesRequestsInFlightAndClosesIdleConnections() throws {
        let gate = Gate()
        let server = try TestHTTPServer.start(routes: { router in
            router.get("/slow") { _, _ in
                gate.pass()
                return Response(body: Array("done".utf8))
            }
            router.get("/api/ping") { _, _ in Response(body: Array("pong".utf8)) }
        })
        let busy = try RawHTTPClient(port: server.port)
        try busy.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        try #require(gate.waitUntilEntered())
        let idle = try RawHTTPClient(port: server.port)
        #expect(try idle.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)

        let stopped = Self.stopInBackground(server)
        #expect(idle.waitForClose())
        // The listener closes early in the stop (the idle connection may close even earlier,
        // as its keep-alive ends): soon no new connection gets in.
        #expect(eventually { (try? RawHTTPClient(port: server.port)) == nil })
        gate.open()
        let response = try busy.readResponse()
        #expect(response.text == "done")
        #expect(response.header("Connection") == "close")
        #expect(stopped.wait(timeout: .now() + 5) == .success)
    }

    /// A mobile upload whose body is still arriving when the deploy starts gets its answer.
    @Test func stop_letsABodyStillArrivingFinishAndAnswers() throws {
        let server = try TestHTTPServer.start(routes: { router in
            router.post("/upload", bodyLimit: 1024 * 1024) { request, _ in
                Response(body: Array("got \(request.body.count)".utf8))
            }
            router.get("/api/ping") { _, _ in Response(body: Array("pong".utf8)) }
        })
        let idle = try RawHTTPClient(port: server.port)
        #expect(try idle.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        let uploader = try RawHTTPClient(port: server.port)
        try uploader.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 200000\r\n\r\n")
        try uploader.send([UInt8](repeating: 1, count: 100_000))

        let stopped = Self.stopInBackground(server)
        // The idle connection closing says the stop has begun; the rest of the body comes after.
        #expect(idle.waitForClose())
        try uploader.send([UInt8](repeating: 2, count: 100_000))
        let response = try uploader.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "got 200000")
        #expect(response.header("Connection") == "close")
        #expect(stopped.wait(timeout: .now() + 5) == .success)
    }

    /// A connection that has sent part of a head has no request in flight yet: it closes.
    @Test func stop_closesAConnectionWithOnlyPartOfAHead() throws {
        let server = try TestHTTPServer.start(routes: { router in
            router.get("/api/ping") { _, _ in Response(body: Array("pong".utf8)) }
        })
        let partial = try RawHTTPClient(port: server.port)
        try partial.send("GET /api/ping HTT")
        let idle = try RawHTTPClient(port: server.port)
        #expect(try idle.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        let started = ContinuousClock.now
        server.stop()
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(partial.waitForClose())
    }

    @Test func stop_givesUpOnRequestsAfterTheGracePeriod() throws {
        let gate = Gate()
        let server = try TestHTTPServer.start(configure: { $0.shutdownGracePeriod = .milliseconds(200) }, routes: { router in
            router.get("/stuck") { _, _ in
                gate.pass()
                return Response()
            }
        })
        let stuck = try RawHTTPClient(port: server.port)
        try stuck.send("GET /stuck HTTP/1.1\r\nHost: t\r\n\r\n")
        try #require(gate.waitUntilEntered())
        server.stop()
        #expect(stuck.waitForClose())
        gate.open()
    }

    /// An answer that refused a request (413 here) ends the request: the stop does not wait
    /// for the connection's linger.
    @Test func refusedRequest_doesNotHoldUpTheStop() throws {
        let server = try TestHTTPServer.start(routes: { router in
            router.post("/upload", bodyLimit: 1024 * 1024) { _, _ in Response() }
        })
        let client = try RawHTTPClient(port: server.port)
        #expect(try client.exchange("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n\r\n").status == 413)
        let started = ContinuousClock.now
        server.stop()
        #expect(ContinuousClock.now - started < .seconds(1))
    }

    /// A handler that returns a stream after the stop began: the stream ends at once
    /// instead of running until the grace period cuts it off.
    @Test func streamStartingDuringTheStop_endsAtOnce() throws {
        let gate = Gate()
        let server = try TestHTTPServer.start(configure: { $0.shutdownGracePeriod = .seconds(8) }, routes: { router in
            router.get("/events") { _, _ in
                gate.pass()
                return Response(body: .stream(ResponseStream { writer in writer.write(Array("hello".utf8)) }))
            }
        })
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
        try #require(gate.waitUntilEntered())
        let started = ContinuousClock.now
        let stopped = Self.stopInBackground(server)
        // The listener closing says the stop has begun.
        #expect(eventually { (try? RawHTTPClient(port: server.port)) == nil })
        gate.open()
        #expect(try client.readHead().status == 200)
        #expect(try client.readChunk() == nil)
        #expect(stopped.wait(timeout: .now() + 5) == .success)
        #expect(ContinuousClock.now - started < .seconds(4))
    }

    /// Two stops at once (SIGTERM during a test's own stop, say): one does the work, the
    /// other returns; neither hangs nor crashes.
    @Test func concurrentStops_areHarmless() throws {
        let server = try TestHTTPServer.start(routes: { router in
            router.get("/api/ping") { _, _ in Response(body: Array("pong".utf8)) }
        })
        let both = DispatchGroup()
        for _ in 0..<2 {
            DispatchQueue.global().async(group: both) { server.stop() }
        }
        #expect(both.wait(timeout: .now() + 5) == .success)
    }
}
