import Testing
@testable import HTTP

extension MultipartParserTests {
    @Suite struct Robustness {
        private static let seedBodies: [[UInt8]] = [
            multipartBody([
                field("title", "Fireflies"), field("body", "a\r\nb"),
                ("Content-Disposition: form-data; name=image; filename=\"i.jpg\"\r\nContent-Type: image/jpeg\r\n",
                 [0xFF, 0xD8, 0x0D, 0x0A, 0x2D, 0x2D, 0xFF, 0xD9]),
            ]),
            multipartBody([field("a", ""), field("b", "--boundary")], preamble: "pre", epilogue: "\r\npost"),
            Array("--boundary \t\r\ncontent-disposition: FORM-DATA; Name=\"x\\\"y\"\r\n\r\n1\r\n--boundary--".utf8),
        ]

        /// Feeds bytes in random pieces; the parser may throw, but must never trap or loop.
        /// `replay` says how to get the same bytes again.
        private func exercise(
            _ bytes: [UInt8], limits: MultipartParser.Limits, replay: String, using generator: inout SplitMix64
        ) {
            var parser = MultipartParser(boundary: "boundary", limits: limits)
            var offset = 0
            do {
                while offset < bytes.count {
                    let size = min(Int.random(in: 1...64, using: &generator), bytes.count - offset)
                    parser.feed(bytes[offset..<offset + size])
                    offset += size
                    _ = try drain(&parser, context: replay)
                }
                try parser.finish()
            } catch {
                #expect(error.status == .badRequest || error.status == .payloadTooLarge, "\(replay): \(error)")
            }
        }

        @Test(arguments: 0..<8)
        func mutatedBodies_neverTrapOrLoop(_ seed: Int) {
            var generator = SplitMix64(state: UInt64(seed) &* 7919)
            var tight = MultipartParser.Limits()
            tight.maxPartHeadBytes = 48
            tight.maxParts = 2
            let fragments = ["\r\n", "--", "\r\n--boundary", "--boundary--", "\n", "\"", ";", " "]
                .map { Array($0.utf8) }
            for body in 0..<400 {
                var bytes = Self.seedBodies.randomElement(using: &generator)!
                for _ in 0..<Int.random(in: 1...6, using: &generator) {
                    let index = Int.random(in: 0..<bytes.count, using: &generator)
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                    case 1: bytes.remove(at: index)
                    case 2: bytes.insert(contentsOf: fragments.randomElement(using: &generator)!, at: index)
                    default: bytes.insert(contentsOf: bytes[index..<min(bytes.count, index + 8)], at: index)
                    }
                    if bytes.isEmpty { bytes = [0] }
                }
                let limits = Bool.random(using: &generator) ? tight : MultipartParser.Limits()
                exercise(bytes, limits: limits, replay: "seed \(seed), body \(body)", using: &generator)
            }
        }

        @Test func delimiterAlphabetSoup_neverTrapsOrLoops() {
            var generator = SplitMix64(state: 42)
            let alphabet = Array("\r\n-boundary :;=\"\\".utf8)
            for body in 0..<2000 {
                let count = Int.random(in: 1...300, using: &generator)
                let bytes = (0..<count).map { _ in alphabet.randomElement(using: &generator)! }
                exercise(bytes, limits: MultipartParser.Limits(), replay: "seed 42, body \(body)", using: &generator)
            }
        }
    }
}
