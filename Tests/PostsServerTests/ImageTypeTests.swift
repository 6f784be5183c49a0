import Testing
@testable import PostsServer

@Suite struct ImageTypeTests {
    private static let riff: [UInt8] = Array("RIFF".utf8) + [0x24, 0, 0, 0]
    private static let images: [([UInt8], ImageType)] = [
        ([0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10], .jpeg),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D], .png),
        (Array("GIF87a".utf8) + [1, 0], .gif),
        (Array("GIF89a".utf8), .gif),
        (riff + Array("WEBPVP8 ".utf8), .webp),
    ]
    private static let others: [[UInt8]] = [
        [],
        [0xFF, 0xD8],                                        // a JPEG cut short
        Array("GIF88a".utf8),
        riff + Array("WAVE".utf8),                           // RIFF, but audio
        Array("<svg xmlns=".utf8),
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x00],    // PNG with a damaged signature
    ]

    @Test func signatures_areRecognised() {
        for (bytes, type) in Self.images { #expect(ImageType(sniffing: bytes) == type, "\(bytes)") }
    }

    @Test func otherBytes_areNotImages() {
        for bytes in Self.others { #expect(ImageType(sniffing: bytes) == nil, "\(bytes)") }
    }

    @Test func eachType_hasItsExtensionAndContentType() {
        #expect(ImageType.allCases.map(\.fileExtension) == ["jpg", "png", "gif", "webp"])
        #expect(ImageType.jpeg.contentType == "image/jpeg")
        #expect(ImageType.webp.contentType == "image/webp")
    }
}
