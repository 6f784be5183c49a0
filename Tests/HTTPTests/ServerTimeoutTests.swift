import Dispatch
import Foundation
import HTTP
import Testing
import TestSupport

/// Timeouts and load shapes that only show over real sockets. Timeouts are set to
/// fractions of a second so the suite stays fast.
@Suite struct ServerTimeoutTests {
    private static func start() throws -> Server {
        try TestHTTPServer.start(configure: {
            $0.headerTimeout = .milliseconds(300)
            $0.idleTimeout = .milliseconds(600)
        }, routes: { router in
            router.get("/api/ping") { _, _ in Response(body: Array("pong".utf8)) }
        })
    }

    @Test func slowDripHead_isCutOffWhileOthersAreServed() throws {
        let server = try Self.start()
        defer { server.stop() }
        let dripper = try RawHTTPClient(port: server.port)
        try dripper.send("GET /api/ping HTTP/1.1\r\n")
        let dripping = DispatchGroup()
        DispatchQueue.global().async(group: dripping) {
            // One header byte at a time, never finishing the head.
            for _ in 0..<40 {
                guard (try? dripper.send("X")) != nil else { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        let other = try RawHTTPClient(port: server.port)
        for _ in 0..<5 { #expect(try other.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200) }
        let response = try dripper.readResponse()
        #expect(response.status == 408)
        #expect(dripper.waitForClose())
        dripping.wait()
    }

    @Test func silentNewConnection_isClosedAfterHeaderTimeout() throws {
        let server = try Self.start()
        defer { server.stop() }
        let silent = try RawHTTPClient(port: server.port)
        #expect(silent.waitForClose())
    }

    @Test func idleKeepAliveConnection_isClosed() throws {
        let server = try Self.start()
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        #expect(try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        #expect(client.waitForClose())
    }

    @Test func stalledBody_isCutOff() throws {
        let server = try Self.start()
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /api/ping HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
        #expect(try client.readResponse().status == 408)
        #expect(client.waitForClose())
    }
}

@Suite struct ServerConcurrencyTests {
    private static func threadCount() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
        return line.flatMap { Int($0.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
    }

    @Test func thousandIdleConnections_costNoThreadsAndLeaveRoomForRequests() throws {
        let server = try TestHTTPServer.start(routes: { router in
            router.get("/api/ping") { _, _ in Response(body: Array("pong".utf8)) }
        })
        defer { server.stop() }
        var idle: [RawHTTPClient] = []
        for index in 0..<1000 {
            let client = try RawHTTPClient(port: server.port)
            if index % 10 == 0 {
                // Some have been served once and now sit in keep-alive, others never spoke.
                #expect(try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
            }
            idle.append(client)
        }
        let fresh = try RawHTTPClient(port: server.port)
        #expect(try fresh.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        #expect(server.openConnections >= 1001)
        #expect(Self.threadCount() < 200)
        #expect(try idle[500].exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
    }

    @Test func slowHandler_doesNotStallOtherConnections() throws {
        let gate = Gate()
        let server = try TestHTTPServer.start(routes: { router in
            router.get("/slow") { _, _ in
                gate.pass()
                return Response(body: Array("slow".utf8))
            }
            router.get("/api/ping") { _, _ in Response(body: Array("pong".utf8)) }
        })
        defer { server.stop() }
        let slow = try RawHTTPClient(port: server.port)
        try slow.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        try #require(gate.waitUntilEntered())
        let fast = try RawHTTPClient(port: server.port)
        for _ in 0..<20 { #expect(try fast.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").text == "pong") }
        gate.open()
        #expect(try slow.readResponse().text == "slow")
    }
}

@Suite struct ServerShutdownTests {
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

        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            server.stop()
            stopped.signal()
        }
        #expect(idle.waitForClose())
        #expect(throws: (any Error).self) { _ = try RawHTTPClient(port: server.port) }
        gate.open()
        let response = try busy.readResponse()
        #expect(response.text == "done")
        #expect(response.header("Connection") == "close")
        #expect(stopped.wait(timeout: .now() + 5) == .success)
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
}

@Suite struct ServerOverloadTests {
    /// With no patience at all for the worker queue, every request that needs a worker is
    /// refused as busy — and one answered on the loop still gets through.
    @Test func requestsThatWaitedTooLongForAWorker_get503WithRetryAfter() throws {
        let server = try TestHTTPServer.start(configure: { $0.maxQueueWait = .nanoseconds(1) }, routes: { router in
            router.get("/work") { _, _ in Response(body: Array("done".utf8)) }
            router.get("/api/ping", runsOnEventLoop: true) { _, _ in Response(body: Array("pong".utf8)) }
        })
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let busy = try client.exchange("GET /work HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(busy.status == 503)
        #expect(busy.header("Retry-After") == "1")
        #expect(busy.json["error"] as? String == "unavailable")
        #expect(try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").text == "pong")
    }

    @Test func requestsWithinTheWait_runNormally() throws {
        let server = try TestHTTPServer.start(configure: { $0.workerThreads = 1 }, routes: { router in
            router.get("/work") { _, _ in Response(body: Array("done".utf8)) }
        })
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        for _ in 0..<10 { #expect(try client.exchange("GET /work HTTP/1.1\r\nHost: t\r\n\r\n").text == "done") }
    }
}
