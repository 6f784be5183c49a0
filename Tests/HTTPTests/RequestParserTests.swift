import Testing
@testable import HTTP

/// What the parser said about one input: each `.body` piece is folded into the request's
/// whole body, so that tests can compare bodies whatever the split.
private enum Parsed: Equatable {
    case head(RequestHead)
    case request(body: [UInt8])
}

/// Feeds `input` in the given piece sizes (cycled) and collects every event but `.needMore`.
private func events(_ input: String, pieces: [Int] = [Int.max], bodyLimit: Int? = nil,
                    limits: RequestParser.Limits = RequestParser.Limits()) throws(HTTPParseError) -> [Parsed] {
    var parser = RequestParser(limits: limits)
    var result: [Parsed] = []
    var body: [UInt8] = []
    let bytes = Array(input.utf8)
    var offset = 0
    var piece = 0
    repeat {
        let size = min(pieces[piece % pieces.count], bytes.count - offset)
        parser.feed(bytes[offset..<offset + size])
        offset += size
        piece += 1
        parsing: while true {
            switch try parser.next() {
            case .needMore:
                break parsing
            case .head(let head):
                if let bodyLimit { parser.bodyLimit = bodyLimit }
                result.append(.head(head))
            case .body(let piece):
                #expect(!piece.isEmpty, "an empty body piece")
                body += piece
            case .end:
                result.append(.request(body: body))
                body = []
            }
        }
    } while offset < bytes.count
    return result
}

private func parseError(_ input: String, bodyLimit: Int? = nil,
                        limits: RequestParser.Limits = RequestParser.Limits()) -> HTTPParseError? {
    do {
        _ = try events(input, bodyLimit: bodyLimit, limits: limits)
        return nil
    } catch {
        return error
    }
}

private func heads(_ events: [Parsed]) -> [RequestHead] {
    events.compactMap { if case .head(let head) = $0 { head } else { nil } }
}

private func bodies(_ events: [Parsed]) -> [String] {
    events.compactMap { if case .request(let body) = $0 { String(decoding: body, as: UTF8.self) } else { nil } }
}

/// The splits every test tries: whole, byte by byte, and random ones from a fixed seed, so a
/// failure replays. A failing expectation names its split (the `pieces` argument).
private func splits(of input: String, seed: UInt64 = 0x5EED) -> [[Int]] {
    var generator = SplitMix64(state: seed)
    let random = (0..<20).map { _ in (0..<8).map { _ in Int.random(in: 1...7, using: &generator) } }
    return [[Int.max], [1], [2], [3]] + random
}

private let chunkedPost = "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    + "5;name=value\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: yes\r\n\r\n"

@Suite struct RequestParserTests {
    @Test func simpleGet_yieldsHeadThenEmptyBody() throws {
        for pieces in splits(of: "") {
            let result = try events("GET /api/ping?x=1 HTTP/1.1\r\nHost: example\r\nAccept: */*\r\n\r\n", pieces: pieces)
            #expect(result.count == 2)
            let head = try #require(heads(result).first)
            #expect(head.method == .GET)
            #expect(head.target == "/api/ping?x=1")
            #expect(head.path == "/api/ping")
            #expect(head.query == "x=1")
            #expect(head.version == .http1_1)
            #expect(head.headers["accept"] == "*/*")
            #expect(head.keepAlive)
            #expect(bodies(result) == [""])
        }
    }

    @Test func contentLengthBody_isCollectedInAnySplit() throws {
        let input = "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world"
        for pieces in splits(of: input) {
            #expect(bodies(try events(input, pieces: pieces)) == ["hello world"], "split \(pieces)")
        }
    }

    @Test func chunkedBody_withExtensionsAndTrailers_isDecoded() throws {
        for pieces in splits(of: chunkedPost) {
            let result = try events(chunkedPost, pieces: pieces)
            #expect(bodies(result) == ["hello, world"], "split \(pieces)")
            #expect(heads(result).first?.framing == .chunked)
            #expect(heads(result).first?.headers["X-Trailer"] == nil)
        }
    }

    @Test func pipelinedRequests_comeOutInOrder() throws {
        let input = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n" + "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
            + chunkedPost + "GET /c HTTP/1.1\r\nHost: x\r\n\r\n"
        for pieces in splits(of: input) {
            let result = try events(input, pieces: pieces)
            #expect(heads(result).map(\.path) == ["/a", "/b", "/upload", "/c"], "split \(pieces)")
            #expect(bodies(result) == ["", "abc", "hello, world", ""], "split \(pieces)")
        }
    }

    @Test func emptyLinesBeforeRequest_areIgnored() throws {
        let result = try events("\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(heads(result).count == 1)
    }

    @Test func keepAlive_followsVersionAndConnectionHeader() throws {
        func keepAlive(_ version: String, _ connection: String?) throws -> Bool {
            let header = connection.map { "Connection: \($0)\r\n" } ?? ""
            return try #require(heads(events("GET / \(version)\r\nHost: x\r\n\(header)\r\n")).first).keepAlive
        }
        #expect(try keepAlive("HTTP/1.1", nil))
        #expect(try !keepAlive("HTTP/1.1", "close"))
        #expect(try !keepAlive("HTTP/1.1", "Keep-Alive, Close"))
        #expect(try !keepAlive("HTTP/1.0", nil))
        #expect(try keepAlive("HTTP/1.0", "keep-alive"))
    }

    @Test func http10_needsNoHost() throws {
        #expect(heads(try events("GET / HTTP/1.0\r\n\r\n")).count == 1)
    }

    @Test func expectContinue_isReported() throws {
        let head = try #require(heads(events(
            "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")).first)
        #expect(head.expectsContinue)
        #expect(head.framing == .contentLength(2))
    }

    @Test func absoluteFormTarget_isReducedToOriginForm() throws {
        let head = try #require(heads(events("GET http://example.com:80/a/b?c=d HTTP/1.1\r\nHost: example.com\r\n\r\n")).first)
        #expect(head.target == "/a/b?c=d")
    }

    @Test func repeatedIdenticalContentLength_isAccepted() throws {
        let input = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok"
        #expect(bodies(try events(input)) == ["ok"])
    }

    @Test func repeatedHeaders_areAllKept() throws {
        let head = try #require(heads(events("GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nX-A: 2\r\n\r\n")).first)
        #expect(head.headers.values(of: "x-a") == ["1", "2"])
    }

    @Test(arguments: [
        ("both framings", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"),
        ("differing lengths", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n"),
        ("differing list", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 4\r\n\r\n"),
        ("signed length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\n"),
        ("hex length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0x3\r\n\r\n"),
        ("huge length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n"),
        ("empty length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n"),
        ("unknown coding", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
        ("chunked twice", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"),
        ("chunked in 1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"),
        ("no colon", "GET / HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n"),
        ("obs-fold", "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  continued\r\n\r\n"),
        ("space before colon", "GET / HTTP/1.1\r\nHost: x\r\nX-A : 1\r\n\r\n"),
        ("control in name", "GET / HTTP/1.1\r\nHost: x\r\nX\u{01}A: 1\r\n\r\n"),
        ("control in value", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{00}b\r\n\r\n"),
        ("bare CR in value", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n"),
        ("bare LF", "GET / HTTP/1.1\nHost: x\n\n"),
        ("bad method", "G(T / HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("lowercase version", "GET / http/1.1\r\nHost: x\r\n\r\n"),
        ("unknown version", "GET / HTTP/2.0\r\nHost: x\r\n\r\n"),
        ("double space", "GET  / HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("relative target", "GET api/ping HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("missing host", "GET / HTTP/1.1\r\n\r\n"),
        ("two hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
        ("bad chunk size", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        ("overlong chunk size", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n"),
        ("chunk without CRLF", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY"),
        ("garbage", "\u{16}\u{03}\u{01}\u{02}\u{00}"),
    ])
    func malformedRequest_isBadRequest(_ name: String, _ input: String) {
        guard case .badRequest = parseError(input) else {
            Issue.record("\(name): expected 400, got \(String(describing: parseError(input)))")
            return
        }
    }

    @Test func longTarget_isURITooLong() {
        let target = "/" + String(repeating: "a", count: 8 * 1024 + 1)
        #expect(parseError("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n") == .uriTooLong)
        // Also while the request line is still arriving, before the head is complete.
        #expect(parseError("GET \(target)") == .uriTooLong)
        #expect(parseError("GET /\(String(repeating: "a", count: 8 * 1024 - 2)) HTTP/1.1\r\nHost: x\r\n\r\n") == nil)
    }

    @Test func largeHead_isHeadersTooLarge() {
        let filler = String(repeating: "X-Filler: \(String(repeating: "v", count: 100))\r\n", count: 170)
        #expect(parseError("GET / HTTP/1.1\r\nHost: x\r\n\(filler)\r\n") == .headersTooLarge)
        #expect(parseError("GET / HTTP/1.1\r\nHost: x\r\n\(filler)") == .headersTooLarge)
        let tooMany = String(repeating: "X-A: 1\r\n", count: 101)
        #expect(parseError("GET / HTTP/1.1\r\nHost: x\r\n\(tooMany)\r\n") == .headersTooLarge)
    }

    @Test func bodyOverLimit_isRefusedBeforeItArrives() {
        #expect(parseError("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n", bodyLimit: 100) == .payloadTooLarge)
        #expect(parseError("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", bodyLimit: 100) == nil)
        let chunks = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + "40\r\n" + String(repeating: "a", count: 64)
            + "\r\n40\r\n"
        #expect(parseError(chunks, bodyLimit: 100) == .payloadTooLarge)
    }

    @Test func failedParser_staysFailed() {
        var parser = RequestParser()
        parser.feed(Array("BAD\u{01} / HTTP/1.1\r\n".utf8))
        #expect(throws: HTTPParseError.self) { try parser.next() }
        parser.feed(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(throws: HTTPParseError.self) { try parser.next() }
    }

    @Test func idleAndBodyStates_areReported() throws {
        var parser = RequestParser()
        #expect(parser.isIdle)
        parser.feed(Array("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab".utf8))
        #expect(!parser.isIdle)
        guard case .head = try parser.next() else { Issue.record("expected head"); return }
        #expect(try parser.next() == .body(Array("ab".utf8)[...]))
        #expect(try parser.next() == .needMore)
        #expect(parser.isReadingBody)
        parser.feed(Array("cd".utf8))
        #expect(try parser.next() == .body(Array("cd".utf8)[...]))
        #expect(parser.bodyBytesReceived == 4)
        #expect(try parser.next() == .end)
        #expect(parser.isIdle)
    }

    /// The body is handed out as it arrives, never assembled: what the parser holds stays
    /// at what one read delivered, however large the body.
    @Test func largeBody_isHandedOutInPiecesWithoutBeingHeld() throws {
        var parser = RequestParser()
        parser.bodyLimit = 16 * 1024 * 1024
        parser.feed(Array("POST /u HTTP/1.1\r\nHost: x\r\nContent-Length: \(10 * 1024 * 1024)\r\n\r\n".utf8))
        guard case .head = try parser.next() else { Issue.record("expected head"); return }
        parser.bodyLimit = 16 * 1024 * 1024
        let read = [UInt8](repeating: 7, count: 64 * 1024)
        var received = 0
        var ended = false
        for _ in 0..<160 {
            parser.feed(read)
            #expect(parser.bufferedByteCount <= read.count)
            pieces: while true {
                switch try parser.next() {
                case .body(let piece): received += piece.count
                case .end: ended = true
                default: break pieces
                }
            }
        }
        #expect(received == 10 * 1024 * 1024)
        #expect(ended)
        parser.releaseMemoryIfDrained()
        #expect(parser.bufferedByteCount == 0)
    }

    /// A body limit set after the head is checked against Content-Length before any byte of
    /// the body, and against chunk sizes before the chunk's data.
    @Test func bodyLimit_isCheckedBeforeTheBytesThatWouldExceedIt() throws {
        var parser = RequestParser()
        parser.feed(Array("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n".utf8))
        guard case .head = try parser.next() else { Issue.record("expected head"); return }
        parser.bodyLimit = 10
        #expect(try parser.next() == .body(Array("hello".utf8)[...]))
        #expect(throws: HTTPParseError.payloadTooLarge) { try parser.next() }
    }
}
