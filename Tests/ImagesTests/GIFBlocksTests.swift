import Testing
import TestSupport
@testable import Images

/// A GIF cut short is refused before libnsgif turns it into a shorter animation.
@Suite struct GIFBlocksTests {
    /// Header, a 2×1 screen with a global table of 2 colours, a graphic control extension,
    /// one image with its own table of 2 colours and two data sub-blocks, the trailer.
    private static let header: [UInt8] = Array("GIF89a".utf8) + [2, 0, 1, 0, 0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
    private static let extensionBlock: [UInt8] = [0x21, 0xF9, 4, 0, 10, 0, 0, 0]
    private static let image: [UInt8] = [0x2C, 0, 0, 0, 0, 2, 0, 1, 0, 0x80] + [0, 0, 0, 255, 255, 255]
        + [2] + [2, 0x44, 0x01] + [1, 0x05] + [0]
    private static let whole = header + extensionBlock + image + [0x3B]

    @Test func aWholeGIF_passes_withOrWithoutItsTrailer() throws {
        #expect(GIFBlocks.complete(Self.whole))
        #expect(GIFBlocks.complete(Self.whole + Array("junk after the trailer".utf8)))
        #expect(GIFBlocks.complete(Self.whole.dropLast()), "ends between blocks, as browsers accept")
        #expect(GIFBlocks.complete(try ImageFixture.animatedGIF.bytes))
    }

    @Test func aGIFCutInsideAnyBlock_isRefused() throws {
        let blockEnds = [Self.header.count, Self.header.count + Self.extensionBlock.count, Self.whole.count - 1]
        for length in 0..<(Self.whole.count - 1) where !blockEnds.contains(length) {
            #expect(!GIFBlocks.complete(Self.whole.prefix(length)), "cut after \(length) bytes")
        }
        #expect(!GIFBlocks.complete(try ImageFixture.truncatedGIF.bytes))
    }
}
