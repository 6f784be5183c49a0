import Testing
@testable import HTTP

private let fileHead = Array(("--boundary\r\nContent-Disposition: form-data; name=\"image\"; filename=\"image.jpg\"\r\n"
    + "Content-Type: image/jpeg\r\n\r\n").utf8)

/// Pseudo-random bytes with the near-misses a real file could hold sprinkled through them.
private func fileBytes(count: Int, seed: UInt64) -> [UInt8] {
    var generator = SplitMix64(state: seed)
    var bytes = (0..<count / 8 + 1).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
    bytes.removeLast(bytes.count - count)
    // Each is fenced with `x`, so a random neighbour cannot complete a delimiter.
    let nearMisses = ["x\r\nx", "x\r\n--x", "x\r\n--boundarx", "x--boundary\r\n", "x\r\n-boundary"]
        .map { Array($0.utf8) }
    for offset in stride(from: 1000, to: count - 100, by: 4099) {
        let nearMiss = nearMisses[offset % nearMisses.count]
        bytes.replaceSubrange(offset..<offset + nearMiss.count, with: nearMiss)
    }
    return bytes
}

extension MultipartParserTests {
    @Suite struct Streaming {
        @Test func tenMebibyteFile_flowsThroughABoundedBuffer() throws {
            let file = fileBytes(count: 10 * 1024 * 1024, seed: 0x1000_0000)
            let body = fileHead + file + Array("\r\n--boundary--\r\n".utf8)
            var parser = MultipartParser(boundary: "boundary")
            let heldBack = parser.delimiter.count + 1
            var received: [UInt8] = []
            received.reserveCapacity(file.count)
            var ended = false
            for offset in stride(from: 0, to: body.count, by: 64 * 1024) {
                parser.feed(body[offset..<min(offset + 64 * 1024, body.count)])
                #expect(parser.bufferedByteCount < 128 * 1024)
                #expect(parser.buffer.count < 128 * 1024 && parser.buffer.capacity < 256 * 1024)
                for event in try drain(&parser) {
                    if case .partData(let data) = event { received += data }
                    if event == .end { ended = true }
                }
                // Content must come out as soon as it cannot be a delimiter, not at the part's end.
                let contentFed = min(offset + 64 * 1024, body.count) - fileHead.count
                #expect(ended || received.count >= min(contentFed, file.count) - heldBack)
                #expect(ended || parser.bufferedByteCount <= heldBack)
            }
            try parser.finish()
            #expect(ended)
            #expect(received == file)
        }

        @Test func partData_isHeldBackOnlyWhileItMayBeADelimiter() throws {
            var parser = MultipartParser(boundary: "boundary")
            parser.feed(Array("--boundary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nabc".utf8))
            #expect(try drain(&parser) == [.partHead(MultipartPartHead(name: "a", headers: HTTPHeaders(
                [("Content-Disposition", "form-data; name=\"a\"")]))), .partData(Array("abc".utf8)[...])])
            parser.feed(Array("\r\n--boundar".utf8))
            #expect(try drain(&parser) == [])
            #expect(parser.bufferedByteCount == 11)
            parser.feed(Array("x".utf8))
            #expect(try drain(&parser) == [.partData(Array("\r\n--boundarx".utf8)[...])])
            parser.feed(Array("\r\n--boundary".utf8))
            #expect(try drain(&parser) == [])
            parser.feed(Array("-".utf8))
            #expect(try drain(&parser) == [])
            parser.feed(Array("-".utf8))
            #expect(try drain(&parser) == [.partEnd, .end])
        }

        @Test func firstCR_isFoundAtEveryOffsetAndAlignment() {
            // Neighbours of CR and bytes with the high bit set are what a word-wise test could confuse.
            let filler: [UInt8] = [0x0C, 0x8D, 0x0E, 0xFF, 0x00, 0x8C, 0x2D, 0x0A]
            for count in 0..<24 {
                for cr in 0..<count {
                    var bytes = (0..<count).map { filler[$0 % filler.count] }
                    bytes[cr] = 0x0D
                    let second = cr + 9 < count ? cr + 9 : nil
                    if let second { bytes[second] = 0x0D }
                    for from in 0...cr {
                        #expect(bytes.withUnsafeBufferPointer { MultipartParser.firstCR(in: $0, from: from) } == cr)
                    }
                    #expect(bytes.withUnsafeBufferPointer { MultipartParser.firstCR(in: $0, from: cr + 1) } == second)
                }
            }
        }
    }
}
