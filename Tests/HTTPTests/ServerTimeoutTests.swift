import Dispatch
import Foundation
import HTTP
import Testing
import TestSupport

/// Timeouts and load shapes that only show over real sockets. Timeouts are set to
/// fractions of a second so the suite stays fast.
@Suite struct ServerTimeoutTests {
    private static func start(headerTimeout: Duration = .milliseconds(300)) throws -> Server {
        try TestHTTPServer.start(configure: {
            $0.headerTimeout = headerTimeout
            $0.idleTimeout = .milliseconds(1500)
            $0.bodyGracePeriod = .milliseconds(300)
        }, routes: { router in
            router.get("/api/ping") { _, _ in Response(body: Array("pong".utf8)) }
            router.post("/upload", bodyLimit: 1024 * 1024) { request, _ in Response(body: Array("\(request.body.count)".utf8)) }
        })
    }

    /// Sends one header byte every 50 ms, never finishing the head, until the server closes.
    private static func drip(into client: RawHTTPClient) -> DispatchGroup {
        let dripping = DispatchGroup()
        DispatchQueue.global().async(group: dripping) {
            for _ in 0..<80 {
                guard (try? client.send("X")) != nil else { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        return dripping
    }

    @Test func slowDripHead_isCutOffWhileOthersAreServed() throws {
        let server = try Self.start()
        defer { server.stop() }
        let dripper = try RawHTTPClient(port: server.port)
        try dripper.send("GET /api/ping HTTP/1.1\r\n")
        let dripping = Self.drip(into: dripper)
        let other = try RawHTTPClient(port: server.port)
        for _ in 0..<5 { #expect(try other.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200) }
        let response = try dripper.readResponse()
        #expect(response.status == 408)
        #expect(dripper.waitForClose())
        dripping.wait()
    }

    /// The head clock starts when the connection opens: a client that waits almost the whole
    /// timeout before its first byte gains nothing by it (it used to get a second timeout).
    @Test func trickledHead_isCutAtTheDeadlineCountedFromAccept() throws {
        let server = try Self.start(headerTimeout: .seconds(2))
        defer { server.stop() }
        let opened = ContinuousClock.now
        let dripper = try RawHTTPClient(port: server.port)
        // The scenario's own pacing, not synchronisation: a client idling before it trickles.
        Thread.sleep(forTimeInterval: 1.5)
        try dripper.send("GET /api/ping HTTP/1.1\r\n")
        let dripping = Self.drip(into: dripper)
        #expect(try dripper.readResponse().status == 408)
        // Counted from the first byte, the cut would come at 3.5 s.
        #expect(ContinuousClock.now - opened < .seconds(3))
        dripping.wait()
    }

    /// A kept-alive connection may sit idle for longer than the head timeout: its next
    /// head's clock starts with that head.
    @Test func keptAliveConnection_mayIdleLongerThanTheHeadTimeout() throws {
        let server = try Self.start()
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        #expect(try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        Thread.sleep(forTimeInterval: 0.6)
        #expect(try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
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

    @Test func stalledBody_isCutOffAfterTheGracePeriod() throws {
        let server = try Self.start()
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
        let response = try client.readResponse()
        #expect(response.status == 408)
        #expect(response.json["error"] as? String == "request_timeout")
        #expect(client.waitForClose())
    }

    /// Every byte used to reset the body's timer, so 20 bytes a second held a connection
    /// forever; now the body must average the minimum rate.
    @Test func tricklingBody_isCutOffBelowTheMinimumRate() throws {
        let server = try Self.start()
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n")
        let trickling = DispatchGroup()
        DispatchQueue.global().async(group: trickling) {
            for _ in 0..<200 {
                guard (try? client.send(String(repeating: "b", count: 10))) != nil else { return }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        #expect(try client.readResponse().status == 408)
        #expect(client.waitForClose())
        trickling.wait()
    }

    @Test func bodyAboveTheMinimumRate_isReadToItsEnd() throws {
        let server = try Self.start()
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 50000\r\n\r\n")
        // About 50 KB/s for a second, well past the grace period: fifty times the minimum,
        // so a loaded machine that stretches the pauses does not make it too slow.
        for _ in 0..<50 {
            try client.send(String(repeating: "b", count: 1000))
            Thread.sleep(forTimeInterval: 0.02)
        }
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "50000")
    }
}

@Suite struct ServerConcurrencyTests {
    private static func threadCount() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
        return line.flatMap { Int($0.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
    }

    @Test func thousandIdleConnections_costNoThreadsAndLeaveRoomForRequests() throws {
        // Deadlines far off: opening a thousand connections can take longer than the test
        // server's usual 5 s head deadline on a loaded machine, and timeouts are not the point.
        let server = try TestHTTPServer.start(configure: {
            $0.headerTimeout = .seconds(120)
            $0.idleTimeout = .seconds(120)
            // All thousand come from 127.0.0.1: the per-address cap is not what this measures.
            $0.maxConnectionsPerIP = 0
        }, routes: { router in
            router.get("/api/ping") { _, _ in Response(body: Array("pong".utf8)) }
        })
        defer { server.stop() }
        let threadsBefore = Self.threadCount()
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
        // Linux only (/proc): elsewhere the count is 0 and proves nothing. The count is the
        // whole test process's, where other suites start and stop servers meanwhile: a thread
        // per connection would add a thousand, their servers a few dozen each.
        #expect(Self.threadCount() - threadsBefore < 500)
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
