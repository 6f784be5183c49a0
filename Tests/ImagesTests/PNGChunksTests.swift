import Foundation
import Testing
@testable import Images

/// A PNG chunk that declares more bytes than the file has is refused before libpng
/// allocates them (the `image-upload` fuzz target's finding: 783 bytes made 1.7 GB).
@Suite struct PNGChunksTests {
    private static func chunk(_ type: String, length: UInt32, data: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: length.bigEndian, Array.init) + Array(type.utf8) + data + [0, 0, 0, 0]
    }

    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    private static let header = chunk("IHDR", length: 13, data: [0, 0, 1, 44, 0, 0, 0, 200, 8, 2, 0, 0, 0])

    @Test func chunksThatFit_pass() {
        let png = Self.signature + Self.header + Self.chunk("tEXt", length: 3, data: [65, 0, 66])
            + Self.chunk("IEND", length: 0, data: [])
        #expect(PNGChunks.fit(png))
        #expect(PNGChunks.fit(png + [1, 2, 3]), "bytes after IEND are not chunks")
    }

    @Test func aChunkLongerThanTheFile_isRefused() {
        let bomb = Self.signature + Self.header + Self.chunk("tEXt", length: 1_701_117_967, data: [65, 66])
        #expect(!PNGChunks.fit(bomb))
        #expect(!PNGChunks.fit(Self.signature + Self.chunk("IHDR", length: 13, data: [0, 0])), "a truncated chunk")
    }

    @Test func theFuzzersInput_failsAsUnreadable_withoutTheAllocation() throws {
        let bomb = Self.signature + Self.header + Self.chunk("tEXt", length: 1_701_117_967, data: Array(repeating: 65, count: 700))
        let path = "/tmp/png-chunks-\(UInt32.random(in: 0...UInt32.max)).png"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bomb)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: ImageFailure.self) { try ImagePipeline.normalize(path, as: .png, to: path + ".out") }
        // An avatar is opened by another path, which a later fuzz run found without the check.
        #expect(throws: ImageFailure.self) { try ImageResizer.avatar(path, as: .png, writingTo: path + ".out") }
    }
}
