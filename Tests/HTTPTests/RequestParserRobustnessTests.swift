import Testing
@testable import HTTP

@Suite struct RequestParserRobustnessTests {
    private static let seeds: [String] = [
        "GET /api/posts/1?limit=5 HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc\r\n\r\n",
        "POST /api/posts HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\nContent-Type: application/json\r\n\r\n{\"title\":\"a\"}",
        "POST /u HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nabcd\r\n0\r\nT: 1\r\n\r\n",
        "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.1\r\nHost: y\r\n\r\n",
    ]

    /// Feeds bytes in random pieces; the parser may throw, but must never trap or loop.
    private func exercise(_ bytes: [UInt8], using generator: inout SplitMix64, seed: UInt64) {
        var parser = RequestParser()
        var offset = 0
        var events = 0
        while offset < bytes.count {
            let size = min(Int.random(in: 1...64, using: &generator), bytes.count - offset)
            parser.feed(bytes[offset..<offset + size])
            offset += size
            do {
                while true {
                    let event = try parser.next()
                    if event == .needMore { break }
                    events += 1
                    #expect(events <= bytes.count + 1, "more events than bytes: the parser is looping (seed \(seed), input \(bytes))")
                }
            } catch {
                return
            }
        }
    }

    @Test(arguments: 0..<8)
    func mutatedRequests_neverTrap(_ seed: Int) {
        let seed = UInt64(seed) &* 7919
        var generator = SplitMix64(state: seed)
        for _ in 0..<400 {
            var bytes = Array(Self.seeds.randomElement(using: &generator)!.utf8)
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.remove(at: index)
                case 2: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: index)
                default: bytes.insert(contentsOf: bytes[index..<min(bytes.count, index + 8)], at: index)
                }
                if bytes.isEmpty { bytes = [0] }
            }
            exercise(bytes, using: &generator, seed: seed)
        }
    }

    /// Found by fuzz/run.sh: obs-text in a Host value, then pipelined garbage, byte by byte.
    @Test func fuzzerFinding_hostWithObsTextThenPipelinedGarbage() {
        let input: [UInt8] = [71, 32, 47, 58, 32, 72, 84, 84, 80, 47, 49, 46, 49, 13, 10, 72, 111, 115, 116, 58, 224, 135,
            242, 245, 255, 255, 255, 255, 255, 255, 84, 32, 47, 112, 32, 13, 10, 13, 10, 69, 84, 32, 47, 97, 41, 112, 105, 47,
            112, 111, 37, 50, 66, 98, 53, 38, 106, 117, 114, 115, 111, 32, 72, 84, 84, 80, 47, 49, 46, 49, 13, 10, 72, 111,
            115, 116, 58, 224, 135, 242, 245, 255, 255, 255, 255, 191, 255, 84, 32, 13, 10, 13, 10, 69, 84, 32, 47, 97, 112,
            105, 47, 64, 112, 111, 37, 50, 66, 98, 53, 38, 106, 117, 114, 115, 111, 114, 61, 97, 37, 50, 66, 98, 61, 97, 37,
            50, 66, 98, 32, 72, 84, 84, 80, 47, 49, 46, 49, 13, 10, 72, 111, 115, 116, 58, 32, 120, 49, 46, 49, 13, 10, 72,
            111, 65, 115, 116, 58, 32, 120, 13, 10, 13, 10]
        var parser = RequestParser()
        for byte in input {
            parser.feed([byte])
            do {
                while true {
                    let event = try parser.next()
                    if event == .needMore { break }
                    if case .head(let head) = event {
                        parser.bodyLimit = 64
                        if let query = head.query { _ = QueryParameters(parsing: query) }
                        for segment in head.path.split(separator: "/") { _ = PercentDecoding.decode(segment, plusAsSpace: false) }
                    }
                }
            } catch {
                return
            }
        }
    }

    /// Found by scripts/fuzz (request-parser): a head at fault twice, in its request line
    /// (no HTTP version) and in a later line (a bare LF after a folded line). Whole, it is
    /// refused for the bare LF; in pieces, for the version, as soon as the request line
    /// ends. Both are 400 and end the connection; which is named follows the split.
    @Test func fuzzerFinding_twoFaultsInOneHead_failWhateverTheSplit() {
        let input = Array("GET /T /api/p1\r\nHost: t\r\nX-A: 1\r\n  continued\r\u{01}\u{00}\n".utf8)
        for pieceSize in [input.count, 1, 6, 13] {
            var parser = RequestParser()
            var failure: HTTPParseError?
            pieces: for start in stride(from: 0, to: input.count, by: pieceSize) {
                parser.feed(input[start..<min(start + pieceSize, input.count)])
                do {
                    while try parser.next() != .needMore { Issue.record("an event from a malformed head") }
                } catch {
                    failure = error
                    break pieces
                }
            }
            #expect(failure?.status == .badRequest, "\(pieceSize)-byte pieces: \(String(describing: failure))")
        }
    }

    @Test func randomBytes_neverTrap() {
        let seed: UInt64 = 42
        var generator = SplitMix64(state: seed)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 1...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            exercise(bytes, using: &generator, seed: seed)
        }
    }
}
