import Dispatch
import Foundation
import HTTP
import Synchronization
import Testing
import TestSupport

/// Responses as files and as streams, over real sockets.
@Suite struct ServerFileResponseTests {
    @Test func file_isSentWhole_andHEADGetsItsLengthOnly() throws {
        let path = NSTemporaryDirectory() + "posts-server-file-\(UUID().uuidString)"
        var generator = SplitMix64(state: 7)
        let contents = (0..<(3 * 1024 * 1024 + 17)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(contents).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let server = try TestHTTPServer.start(routes: { router in
            router.get("/file") { _, _ in
                guard let file = FileBody.open(path: path) else { throw HTTPError.notFound() }
                return Response(headers: HTTPHeaders([("Content-Type", "application/octet-stream")]), body: .file(file))
            }
            router.get("/missing") { _, _ in
                guard let file = FileBody.open(path: path + ".absent") else { throw HTTPError.notFound() }
                return Response(body: .file(file))
            }
        })
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.exchange("GET /file HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(response.header("Content-Length") == "\(contents.count)")
        #expect(response.body == contents)
        let head = try client.exchange("HEAD /file HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == "\(contents.count)")
        #expect(try client.exchange("GET /missing HTTP/1.1\r\nHost: t\r\n\r\n").status == 404)
        // A directory is not a file to send.
        #expect(FileBody.open(path: NSTemporaryDirectory()) == nil)
    }

    /// A client that resets its connection while a file goes out costs that connection only:
    /// sendfile's SIGPIPE once ended the whole server.
    @Test func aClientResettingMidFile_leavesTheServerServing() throws {
        let path = NSTemporaryDirectory() + "posts-server-file-\(UUID().uuidString)"
        try Data(count: 16 * 1024 * 1024).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let server = try TestHTTPServer.start(routes: { router in
            router.get("/file") { _, _ in
                guard let file = FileBody.open(path: path) else { throw HTTPError.notFound() }
                return Response(body: .file(file))
            }
        })
        defer { server.stop() }
        for _ in 0..<5 {
            let client = try RawHTTPClient(port: server.port)
            try client.send("GET /file HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readHead().status == 200)
            // Closed with an RST while most of the file is still to go.
            var reset = linger(l_onoff: 1, l_linger: 0)
            setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
        }
        let whole = try RawHTTPClient(port: server.port, timeout: .seconds(30)).exchange("GET /file HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(whole.status == 200 && whole.body.count == 16 * 1024 * 1024)
    }
}

@Suite struct ServerStreamResponseTests {
    /// A stream whose producer the test drives from its own thread.
    private final class Producer: Sendable {
        let writer = Mutex<StreamWriter?>(nil)
        let started = DispatchSemaphore(value: 0)
        let closed = DispatchSemaphore(value: 0)

        func stream(queueLimit: Int = 1 << 20) -> ResponseStream {
            ResponseStream(queueLimit: queueLimit) { [self] writer in
                writer.onClose { [self] in closed.signal() }
                self.writer.withLock { $0 = writer }
                started.signal()
            }
        }

        func waitForWriter() throws -> StreamWriter {
            try #require(started.wait(timeout: .now() + 10) == .success)
            return try #require(writer.withLock { $0 })
        }
    }

    private static func start(_ producer: Producer, queueLimit: Int = 1 << 20) throws -> Server {
        try TestHTTPServer.start(routes: { router in
            router.get("/events") { _, _ in
                Response(headers: HTTPHeaders([("Content-Type", "text/event-stream")]),
                         body: .stream(producer.stream(queueLimit: queueLimit)))
            }
            router.get("/api/ping") { _, _ in Response(body: Array("pong".utf8)) }
        })
    }

    @Test func stream_deliversWritesFromAnotherThreadAsChunks_thenTheConnectionGoesOn() throws {
        let producer = Producer()
        let server = try Self.start(producer)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try client.readHead()
        #expect(head.status == 200)
        #expect(head.header("Transfer-Encoding") == "chunked")
        #expect(head.header("Content-Length") == nil)
        let writer = try producer.waitForWriter()
        #expect(writer.write(Array("data: one\n\n".utf8)) == .queued)
        #expect(try client.readChunk() == Array("data: one\n\n".utf8))
        DispatchQueue.global().async {
            writer.write(Array("data: two\n\n".utf8))
            writer.finish()
        }
        #expect(try client.readChunk() == Array("data: two\n\n".utf8))
        #expect(try client.readChunk() == nil)
        #expect(producer.closed.wait(timeout: .now() + 5) == .success)
        #expect(writer.write([1]) == .closed)
        #expect(try client.exchange("GET /api/ping HTTP/1.1\r\nHost: t\r\n\r\n").text == "pong")
    }

    @Test func http10Stream_isUnframedAndEndsWithTheConnection() throws {
        let producer = Producer()
        let server = try Self.start(producer)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /events HTTP/1.0\r\n\r\n")
        let head = try client.readHead()
        #expect(head.header("Transfer-Encoding") == nil)
        #expect(head.header("Connection") == "close")
        let writer = try producer.waitForWriter()
        writer.write(Array("abc".utf8))
        writer.finish()
        #expect(try client.readUntilClose() == Array("abc".utf8))
    }

    /// A client that stops reading: once the queue limit waits in the server beyond its
    /// socket, every write is refused (`.full`), so memory stays bounded; the producer gives
    /// up on it and the connection closes.
    @Test func clientThatStopsReading_fillsItsQueue_andNoMore() throws {
        let producer = Producer()
        let server = try Self.start(producer, queueLimit: 64 * 1024)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
        let writer = try producer.waitForWriter()
        let piece = [UInt8](repeating: 0x61, count: 16 * 1024)
        var full = 0
        // Socket buffers take a few megabytes first; the loop drains into them meanwhile.
        for _ in 0..<200_000 where full < 200 {
            switch writer.write(piece) {
            case .queued: full = 0
            case .full:
                full += 1
                // The unsent part counts each chunk's framing (8 bytes for these).
                #expect(writer.waitingBytes <= 64 * 1024 + 8 * 4)
                Thread.sleep(forTimeInterval: 0.001)
            case .closed: Issue.record("closed before the client went away")
            }
        }
        #expect(full == 200)
        writer.cancel()
        #expect(producer.closed.wait(timeout: .now() + 5) == .success)
        #expect(client.waitForClose())
    }

    @Test func clientGoingAway_closesTheStreamForItsProducer() throws {
        let producer = Producer()
        let server = try Self.start(producer)
        defer { server.stop() }
        var client: RawHTTPClient? = try RawHTTPClient(port: server.port)
        try client?.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
        let writer = try producer.waitForWriter()
        client = nil
        #expect(producer.closed.wait(timeout: .now() + 5) == .success)
        #expect(writer.isClosed)
    }

    /// Streams are not requests in flight: a stop ends them at once instead of waiting
    /// out the grace period for them.
    @Test func stop_endsOpenStreamsAtOnce() throws {
        let producer = Producer()
        let server = try Self.start(producer)
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = try client.readHead()
        let writer = try producer.waitForWriter()
        writer.write(Array("first".utf8))
        #expect(try client.readChunk() == Array("first".utf8))
        let started = ContinuousClock.now
        server.stop()
        #expect(ContinuousClock.now - started < .seconds(3))
        #expect(try client.readChunk() == nil)
        #expect(client.waitForClose())
        #expect(writer.write(Array("late".utf8)) == .closed)
    }
}
