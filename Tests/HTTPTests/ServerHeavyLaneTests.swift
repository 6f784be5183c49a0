import Foundation
import HTTP
import Synchronization
import Testing
import TestSupport

/// The heavy lane over real sockets: a handler that calls `requireHeavyLane()` is run
/// again on a heavy-lane thread, its admission is not run twice, and heavy work never
/// holds the standard workers every other request needs.
@Suite struct ServerHeavyLaneTests {
    /// What the handlers saw, counted across threads.
    private final class Record: Sendable {
        let admissions = Atomic<Int>(0)
        let handlerCalls = Atomic<Int>(0)
        let heavyRuns = Atomic<Int>(0)
        /// The threads of the last call before and after the move (pthread_self).
        let standardThread = Mutex<pthread_t?>(nil)
        let heavyThread = Mutex<pthread_t?>(nil)
    }

    /// `/heavy` moves to the heavy lane and passes `gate` there (when given); `/light` runs
    /// on a standard worker. Each answers "<lane> <admitted value> <body bytes> <thread name>".
    private static func start(record: Record, gate: Gate? = nil, heavyThreads: Int = 1,
                              heavyQueueWait: Duration = .seconds(60)) throws -> Server {
        let admission = Admission { head, _ in
            record.admissions.add(1, ordering: .relaxed)
            return head.headers["X-Pass"] ?? "-"
        }
        return try TestHTTPServer.start(configure: {
            $0.workerThreads = 1
            $0.heavyWorkerThreads = heavyThreads
            $0.heavyQueueWait = heavyQueueWait
        }, routes: { router in
            router.post("/heavy", body: .collect(limit: 1 << 20), admission: admission) { request, context in
                record.handlerCalls.add(1, ordering: .relaxed)
                if context.lane == .standard { record.standardThread.withLock { $0 = pthread_self() } }
                try context.requireHeavyLane()
                record.heavyThread.withLock { $0 = pthread_self() }
                record.heavyRuns.add(1, ordering: .relaxed)
                gate?.pass()
                return Self.describe(context, request.body.count)
            }
            router.get("/light") { _, context in Self.describe(context, 0) }
        })
    }

    private static func describe(_ context: RequestContext, _ bodyBytes: Int) -> Response {
        let lane = context.lane == .heavy ? "heavy" : "standard"
        let thread = ThreadName.current
        return Response(body: Array("\(lane) \(context.admitted as? String ?? "nil") \(bodyBytes) \(thread)".utf8))
    }

    private static func heavyRequest(pass: String = "ash", body: String = "hello") -> String {
        "POST /heavy HTTP/1.1\r\nHost: t\r\nX-Pass: \(pass)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test func aHandlerAskingForTheHeavyLane_runsOnAHeavyThread_withItsAdmissionRunOnce() throws {
        let record = Record()
        let server = try Self.start(record: record)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let answer = try client.exchange(Self.heavyRequest())
        #expect(answer.status == 200)
        let words = answer.text.split(separator: " ").map(String.init)
        // What admission returned reached the re-run, and the body came along whole.
        #expect(words.count == 4 && words[0] == "heavy" && words[1] == "ash" && words[2] == "5", "\(answer.text)")
        #expect(record.admissions.load(ordering: .relaxed) == 1)
        // Once on the standard lane (where it asked to move), once on the heavy one, and
        // not on the same thread.
        #expect(record.handlerCalls.load(ordering: .relaxed) == 2 && record.heavyRuns.load(ordering: .relaxed) == 1)
        let standard = try #require(record.standardThread.withLock { $0 }), heavy = try #require(record.heavyThread.withLock { $0 })
        #expect(pthread_equal(standard, heavy) == 0)
        // The heavy lane's threads are named http-heavy-N, as the kernel sees them.
        let threadName = words.count == 4 ? words[3] : ""
        #expect(threadName.hasPrefix("http-heavy"), "\(answer.text)")
        // The connection goes on, and a standard route stays on the standard lane.
        let light = try client.exchange("GET /light HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(light.text.hasPrefix("standard nil 0"), "\(light.text)")
    }

    /// A head sent before its body: admission runs on its own, before the body is read; the
    /// move to the heavy lane after the body does not run it again.
    @Test func admissionBeforeTheBody_isNotRunAgainOnTheHeavyLane() throws {
        let record = Record()
        let server = try Self.start(record: record)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /heavy HTTP/1.1\r\nHost: t\r\nX-Pass: brock\r\nContent-Length: 5\r\n\r\n")
        // Generous: the whole test run shares two cores.
        try #require(eventually(timeout: .seconds(60)) { record.admissions.load(ordering: .relaxed) == 1 })
        try client.send("hello")
        let answer = try client.readResponse()
        #expect(answer.text.hasPrefix("heavy brock 5 "), "\(answer.text)")
        #expect(record.admissions.load(ordering: .relaxed) == 1)
    }

    /// One heavy thread, held; one standard worker: the held request does not sit on the
    /// standard worker, so every other route still answers, and a second heavy request
    /// waits its turn instead of failing.
    @Test func whileEveryHeavyThreadIsHeld_standardRoutesStillAnswer() throws {
        let record = Record()
        let gate = Gate()
        let server = try Self.start(record: record, gate: gate)
        defer { server.stop() }
        let first = try RawHTTPClient(port: server.port)
        try first.send(Self.heavyRequest(pass: "first"))
        try #require(gate.waitUntilEntered())
        let second = try RawHTTPClient(port: server.port, timeout: .seconds(20))
        try second.send(Self.heavyRequest(pass: "second"))
        let light = try RawHTTPClient(port: server.port)
        for _ in 0..<20 {
            let answer = try light.exchange("GET /light HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(answer.status == 200 && answer.text.hasPrefix("standard nil 0 "), "\(answer.text)")
        }
        // The second is queued behind the first: it has not run on the heavy lane yet.
        #expect(record.heavyRuns.load(ordering: .relaxed) == 1)
        gate.open()
        #expect(try first.readResponse().text.hasPrefix("heavy first 5 "))
        try #require(gate.waitUntilEntered())
        gate.open()
        #expect(try second.readResponse().text.hasPrefix("heavy second 5 "))
        #expect(record.admissions.load(ordering: .relaxed) == 2)
    }

    /// A request that waited for a heavy thread longer than `heavyQueueWait` is answered
    /// 503 (with Retry-After) when a thread gets to it, and its handler is not run there.
    @Test func aRequestWaitingPastHeavyQueueWait_gets503() throws {
        let record = Record()
        let gate = Gate(limit: .seconds(60))
        let wait = Duration.milliseconds(300)
        let server = try Self.start(record: record, gate: gate, heavyQueueWait: wait)
        defer { server.stop() }
        let first = try RawHTTPClient(port: server.port, timeout: .seconds(30))
        try first.send(Self.heavyRequest(pass: "first"))
        try #require(gate.waitUntilEntered())
        let second = try RawHTTPClient(port: server.port, timeout: .seconds(30))
        try second.send(Self.heavyRequest(pass: "second"))
        // The server says when the second has moved and waits for the held thread: its
        // wait has begun by then, however long the loaded machine took to get it there.
        try #require(eventually(timeout: .seconds(60)) { server.heavyLaneWaiting == 1 })
        // The first's two calls (standard, then heavy) and the second's on the standard lane.
        #expect(record.handlerCalls.load(ordering: .relaxed) == 3)
        // The wait itself is what is tested: the first is let go only once the second has
        // waited longer than heavyQueueWait.
        Thread.sleep(forTimeInterval: (wait * 2).timeInterval)
        gate.open()
        #expect(try first.readResponse().status == 200)
        let refused = try second.readResponse()
        #expect(refused.status == 503 && refused.header("Retry-After") == "1")
        #expect(refused.json["error"] as? String == "unavailable")
        #expect(record.heavyRuns.load(ordering: .relaxed) == 1)
        // The lane is free again: a new heavy request runs.
        let third = try RawHTTPClient(port: server.port, timeout: .seconds(30))
        try third.send(Self.heavyRequest(pass: "third"))
        try #require(gate.waitUntilEntered())
        gate.open()
        #expect(try third.readResponse().text.hasPrefix("heavy third 5 "))
    }
}

private extension Duration {
    var timeInterval: TimeInterval {
        max(0, Double(components.seconds) + Double(components.attoseconds) / 1e18)
    }
}
