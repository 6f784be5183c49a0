import Testing
@testable import Images

@Suite struct ImageFormatTests {
    private static let riff: [UInt8] = Array("RIFF".utf8) + [0x24, 0, 0, 0]
    private static func isoBox(_ brand: String) -> [UInt8] { [0, 0, 0, 0x18] + Array("ftyp".utf8) + Array(brand.utf8) }
    private static let images: [([UInt8], ImageFormat)] = [
        ([0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10], .jpeg),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D], .png),
        (Array("GIF87a".utf8) + [1, 0], .gif),
        (Array("GIF89a".utf8), .gif),
        (riff + Array("WEBPVP8 ".utf8), .webp),
        (isoBox("heic"), .heic),
        (isoBox("mif1"), .heic),
        (isoBox("heix"), .heic),
    ]
    private static let others: [[UInt8]] = [
        [],
        [0xFF, 0xD8],                                        // a JPEG cut short
        Array("GIF88a".utf8),
        riff + Array("WAVE".utf8),                           // RIFF, but audio
        Array("<svg xmlns=".utf8),
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x00],    // PNG with a damaged signature
        isoBox("isom"),                                      // an MP4 video
        isoBox("avif"),                                      // AVIF: HEIF's box, not accepted
        Array(isoBox("heic").prefix(11)),                    // a brand cut short
    ]

    @Test func signatures_areRecognised() {
        for (bytes, format) in Self.images { #expect(ImageFormat(sniffing: bytes) == format, "\(bytes)") }
    }

    @Test func otherBytes_areNotImages() {
        for bytes in Self.others { #expect(ImageFormat(sniffing: bytes) == nil, "\(bytes)") }
    }

    @Test func eachFormat_hasItsExtensionAndContentType() {
        #expect(ImageFormat.allCases.map(\.fileExtension) == ["jpg", "png", "gif", "webp", "heic"])
        #expect(ImageFormat.jpeg.contentType == "image/jpeg")
        #expect(ImageFormat.webp.contentType == "image/webp")
    }

    @Test func heic_isStoredAsJPEG_andAnimationsSizeAsStills() {
        #expect(ImageFormat.heic.stored == .jpeg)
        #expect(ImageFormat.gif.stored == .gif)
        #expect(ImageFormat.gif.still == .png)
        #expect(ImageFormat.webp.still == .webp)
        #expect(ImageFormat.heic.still == .jpeg)
    }
}
