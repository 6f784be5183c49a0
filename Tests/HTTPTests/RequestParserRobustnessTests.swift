import Testing
@testable import HTTP

/// A small deterministic generator, so a failure can be replayed from its seed.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct RequestParserRobustnessTests {
    private static let seeds: [String] = [
        "GET /api/posts/1?limit=5 HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc\r\n\r\n",
        "POST /api/posts HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\nContent-Type: application/json\r\n\r\n{\"title\":\"a\"}",
        "POST /u HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nabcd\r\n0\r\nT: 1\r\n\r\n",
        "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.1\r\nHost: y\r\n\r\n",
    ]

    /// Feeds bytes in random pieces; the parser may throw, but must never trap or loop.
    private func exercise(_ bytes: [UInt8], using generator: inout SplitMix64) {
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
                    #expect(events <= bytes.count + 1, "more events than bytes: the parser is looping")
                }
            } catch {
                return
            }
        }
    }

    @Test(arguments: 0..<8)
    func mutatedRequests_neverTrap(_ seed: Int) {
        var generator = SplitMix64(state: UInt64(seed) &* 7919)
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
            exercise(bytes, using: &generator)
        }
    }

    @Test func randomBytes_neverTrap() {
        var generator = SplitMix64(state: 42)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 1...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            exercise(bytes, using: &generator)
        }
    }
}
