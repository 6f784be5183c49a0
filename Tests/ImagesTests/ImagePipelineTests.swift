import Foundation
import Testing
import TestSupport
@testable import Images

/// The image pipeline on real files (API.md "Images for phones"): what it writes is read
/// back with Pillow and exiftool, never with libvips itself, so a libvips quirk cannot hide
/// behind its own reader.
@Suite struct ImagePipelineTests {
    /// A folder of its own per test, removed after.
    private final class Output {
        let directory = NSTemporaryDirectory() + "posts-image-pipeline-\(UUID().uuidString)"
        init() throws { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: directory) }
        func path(_ name: String) -> String { directory + "/" + name }
        var files: [String] { (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] }
    }

    private static func normalize(_ fixture: ImageFixture, as format: ImageFormat, into output: Output,
                                  limits: ImageLimits = .api) throws -> (ProcessedImage, String) {
        let destination = output.path("made.\(format.stored.fileExtension)")
        return (try ImagePipeline.normalize(try fixture.path, as: format, to: destination, limits: limits), destination)
    }

    private static func contains(_ path: String, _ text: String) throws -> Bool {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        return bytes.range(of: Data(text.utf8)) != nil
    }

    /// The pipeline's failure; nil when it succeeded (or failed otherwise, which a test's
    /// check then reports).
    private static func failure(_ body: () throws -> Any) -> ImageFailure? {
        do {
            _ = try body()
            return nil
        } catch {
            return error as? ImageFailure
        }
    }

    private static func isRed(_ rgb: [Int]) -> Bool { rgb.count == 3 && rgb[0] > 180 && rgb[2] < 80 }
    private static func isBlue(_ rgb: [Int]) -> Bool { rgb.count == 3 && rgb[2] > 180 && rgb[0] < 80 }

    // MARK: normalize

    /// Orientation 6 turns the stored 600×400 a quarter clockwise: its left (red) half
    /// ends up on top. The pixels are turned, so no viewer needs the tag.
    @Test func rotatedPhoto_isTurnedUpright() throws {
        let output = try Output()
        let (made, path) = try Self.normalize(.gpsRotated, as: .jpeg, into: output)
        #expect(made == ProcessedImage(format: .jpeg, width: 400, height: 600))
        let report = try ImageProbe.inspect(path, at: [(0.5, 0.1), (0.5, 0.9)])
        #expect(report.format == "JPEG" && report.width == 400 && report.height == 600)
        #expect(Self.isRed(report.colours[0]), "top: \(report.colours[0])")
        #expect(Self.isBlue(report.colours[1]), "bottom: \(report.colours[1])")
    }

    @Test func photo_losesExifGPSSerialAndComment() throws {
        let output = try Output()
        let (_, path) = try Self.normalize(.gpsRotated, as: .jpeg, into: output)
        let tags = try ImageProbe.exiftool(path)
        #expect(ImageProbe.privateTags(tags).isEmpty, "\(ImageProbe.privateTags(tags))")
        let report = try ImageProbe.inspect(path)
        #expect(report.exifTags == 0 && !report.infoKeys.contains("exif") && !report.infoKeys.contains("comment"))
        // Not hidden anywhere else in the file either.
        for secret in ["SERIAL-0042", "PhoneMaker", "Phone 15", "camera comment"] {
            #expect(try !Self.contains(path, secret), "\(secret)")
        }
    }

    @Test func png_losesItsTextChunks() throws {
        let output = try Output()
        let (made, path) = try Self.normalize(.textPNG, as: .png, into: output)
        #expect(made == ProcessedImage(format: .png, width: 300, height: 200))
        let report = try ImageProbe.inspect(path)
        #expect(report.format == "PNG" && report.textKeys.isEmpty, "\(report.textKeys)")
        #expect(!report.infoKeys.contains { ["Comment", "Author", "xmp", "XML:com.adobe.xmp"].contains($0) }, "\(report.infoKeys)")
        #expect(ImageProbe.privateTags(try ImageProbe.exiftool(path)).isEmpty)
        for secret in ["secret comment", "Jane Doe", "GPS 48.85"] { #expect(try !Self.contains(path, secret), "\(secret)") }
    }

    @Test(arguments: [(ImageFixture.animatedGIF, ImageFormat.gif, "GIF"), (.animatedWebP, .webp, "WEBP")])
    func animation_keepsItsThreeFrames(fixture: ImageFixture, format: ImageFormat, pillowName: String) throws {
        let output = try Output()
        let (made, path) = try Self.normalize(fixture, as: format, into: output)
        // The size of one frame, as it displays, not of the frames stacked.
        #expect(made == ProcessedImage(format: format, width: 120, height: 80))
        let report = try ImageProbe.inspect(path, at: [(0.5, 0.5)])
        #expect(report.format == pillowName && report.width == 120 && report.height == 80 && report.frames == 3)
        #expect(Self.isRed(report.colours[0]), "first frame: \(report.colours[0])")
        #expect(ImageProbe.privateTags(try ImageProbe.exiftool(path)).isEmpty)
    }

    @Test func heic_isStoredAsJPEG() throws {
        let output = try Output()
        let (made, path) = try Self.normalize(.heic, as: .heic, into: output)
        #expect(made == ProcessedImage(format: .jpeg, width: 640, height: 480))
        let report = try ImageProbe.inspect(path, at: [(0.25, 0.5), (0.75, 0.5)])
        #expect(report.format == "JPEG" && report.width == 640 && report.height == 480)
        #expect(Self.isRed(report.colours[0]) && Self.isBlue(report.colours[1]), "\(report.colours)")
        #expect(ImageProbe.privateTags(try ImageProbe.exiftool(path)).isEmpty)
    }

    @Test(arguments: [(ImageFixture.wideJPEG, ImageFormat.jpeg, "JPEG", 2000, 1000), (.widePNG, .png, "PNG", 800, 400),
                      (.stillWebP, .webp, "WEBP", 400, 300), (.smallJPEG, .jpeg, "JPEG", 300, 200),
                      (.progressiveJPEG, .jpeg, "JPEG", 400, 300)])
    func plainImages_keepTheirFormatAndSize(fixture: ImageFixture, format: ImageFormat, pillowName: String,
                                            width: Int, height: Int) throws {
        let output = try Output()
        let (made, path) = try Self.normalize(fixture, as: format, into: output)
        #expect(made == ProcessedImage(format: format, width: width, height: height))
        let report = try ImageProbe.inspect(path)
        #expect(report.format == pillowName && report.width == width && report.height == height && report.frames == 1)
    }

    // MARK: refusals

    /// The header decides: 50000×50000 would be 7.5 GB of pixels, 9000×10 is over the side
    /// limit. Both are refused at once and nothing is written.
    @Test(arguments: [ImageFixture.bomb, .tooWide])
    func oversizedHeader_isTooLarge_atOnce(fixture: ImageFixture) throws {
        let output = try Output()
        let started = ContinuousClock.now
        let failure = Self.failure { try Self.normalize(fixture, as: .png, into: output) }
        #expect(failure?.isTooLarge == true, "\(String(describing: failure))")
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(output.files.isEmpty)
    }

    /// Three frames of 120×80 are 28,800 pixels though each is 9,600: an animation counts
    /// every frame, or a long one of small frames would be a bomb too.
    @Test func animation_countsEveryFramesPixels() throws {
        let output = try Output()
        let limits = ImageLimits(maxPixels: 20_000, maxSide: 8192)
        for (fixture, format) in [(ImageFixture.animatedGIF, ImageFormat.gif), (.animatedWebP, .webp)] {
            let failure = Self.failure { try Self.normalize(fixture, as: format, into: output, limits: limits) }
            #expect(failure?.isTooLarge == true, "\(fixture): \(String(describing: failure))")
        }
        // One still frame of the same size passes the same limits.
        _ = try Self.normalize(.smallJPEG, as: .jpeg, into: output, limits: ImageLimits(maxPixels: 60_000, maxSide: 8192))
    }

    /// Every damaged kind: a JPEG cut short (baseline or progressive), one whose scan data
    /// is garbled (libjpeg only warns of that, and fills the rest with grey), bytes that
    /// merely start like a JPEG, a PNG, a WebP and an animated GIF cut short.
    static let damaged: [(ImageFixture, ImageFormat)] = [
        (.truncated, .jpeg), (.truncatedProgressive, .jpeg), (.garbled, .jpeg), (.corrupt, .jpeg),
        (.truncatedPNG, .png), (.truncatedWebP, .webp), (.truncatedGIF, .gif),
    ]

    /// A damaged upload is refused (415), never published as a grey-filled picture.
    @Test(arguments: damaged)
    func damagedImage_isUnreadable(fixture: ImageFixture, format: ImageFormat) throws {
        let output = try Output()
        let failure = Self.failure { try Self.normalize(fixture, as: format, into: output) }
        #expect(failure?.isUnreadable == true, "\(String(describing: failure))")
    }

    // MARK: resize

    @Test func resize_scalesToTheWidth_keepingTheAspect() throws {
        let output = try Output()
        for width in [160, 320, 640, 1080, 1600] {
            let path = output.path("w\(width).jpg")
            let made = try ImageResizer.resize(try ImageFixture.wideJPEG.path, as: .jpeg, toWidth: width, writingTo: path)
            #expect(made == ProcessedImage(format: .jpeg, width: width, height: width / 2))
            let report = try ImageProbe.inspect(path, at: [(0.25, 0.5), (0.75, 0.5)])
            #expect(report.format == "JPEG" && report.width == width && report.height == width / 2)
            #expect(Self.isRed(report.colours[0]) && Self.isBlue(report.colours[1]), "\(width): \(report.colours)")
        }
    }

    @Test func resize_neverScalesUp() throws {
        let output = try Output()
        let path = output.path("w640.jpg")
        let made = try ImageResizer.resize(try ImageFixture.smallJPEG.path, as: .jpeg, toWidth: 640, writingTo: path)
        #expect(made == ProcessedImage(format: .jpeg, width: 300, height: 200))
        let report = try ImageProbe.inspect(path)
        #expect(report.width == 300 && report.height == 200)
    }

    @Test func resize_ofAGIF_isItsFirstFrameAsPNG() throws {
        let output = try Output()
        let path = output.path("w160.png")
        let made = try ImageResizer.resize(try ImageFixture.animatedGIF.path, as: .gif, toWidth: 160, writingTo: path)
        #expect(made == ProcessedImage(format: .png, width: 120, height: 80))
        let report = try ImageProbe.inspect(path, at: [(0.5, 0.5)])
        #expect(report.format == "PNG" && report.frames == 1 && report.width == 120 && report.height == 80)
        #expect(Self.isRed(report.colours[0]), "\(report.colours)")
    }

    // MARK: avatar

    @Test func avatar_isASquareOfAtMost512_croppedAtTheCentre() throws {
        let output = try Output()
        let path = output.path("avatar.jpg")
        let made = try ImageResizer.avatar(try ImageFixture.wideJPEG.path, as: .jpeg, writingTo: path)
        #expect(made == ProcessedImage(format: .jpeg, width: 512, height: 512))
        // The centre of a half-red, half-blue 2000×1000 is the border: both halves remain.
        let report = try ImageProbe.inspect(path, at: [(0.1, 0.5), (0.9, 0.5)])
        #expect(report.width == 512 && report.height == 512)
        #expect(Self.isRed(report.colours[0]) && Self.isBlue(report.colours[1]), "\(report.colours)")
    }

    @Test func avatar_smallerThan512_staysSmaller() throws {
        let output = try Output()
        let path = output.path("avatar.jpg")
        let made = try ImageResizer.avatar(try ImageFixture.smallJPEG.path, as: .jpeg, writingTo: path)
        #expect(made == ProcessedImage(format: .jpeg, width: 200, height: 200))
        let report = try ImageProbe.inspect(path)
        #expect(report.width == 200 && report.height == 200)
    }

    @Test func avatar_ofARotatedPhoto_isUprightAndClean() throws {
        let output = try Output()
        let path = output.path("avatar.jpg")
        let made = try ImageResizer.avatar(try ImageFixture.gpsRotated.path, as: .jpeg, writingTo: path)
        #expect(made == ProcessedImage(format: .jpeg, width: 400, height: 400))
        // Upright it is 400×600, red on top: the centre square holds the border, red above.
        let report = try ImageProbe.inspect(path, at: [(0.5, 0.1), (0.5, 0.9)])
        #expect(Self.isRed(report.colours[0]) && Self.isBlue(report.colours[1]), "\(report.colours)")
        #expect(ImageProbe.privateTags(try ImageProbe.exiftool(path)).isEmpty)
    }

    @Test func avatar_ofAGIF_isAPNGStill_andABomb_isTooLarge() throws {
        let output = try Output()
        let path = output.path("avatar.png")
        let made = try ImageResizer.avatar(try ImageFixture.animatedGIF.path, as: .gif, writingTo: path)
        #expect(made == ProcessedImage(format: .png, width: 80, height: 80))
        let report = try ImageProbe.inspect(path)
        #expect(report.format == "PNG" && report.frames == 1)
        let failure = Self.failure { try ImageResizer.avatar(try ImageFixture.bomb.path, as: .png, writingTo: output.path("bomb.png")) }
        #expect(failure?.isTooLarge == true, "\(String(describing: failure))")
    }

    /// An avatar is made with shrink-on-load, another decoder call than a post's image:
    /// it refuses the same damage.
    @Test(arguments: damaged)
    func avatar_ofADamagedImage_isUnreadable(fixture: ImageFixture, format: ImageFormat) throws {
        let output = try Output()
        let failure = Self.failure {
            try ImageResizer.avatar(try fixture.path, as: format, writingTo: output.path("avatar.\(format.still.fileExtension)"))
        }
        #expect(failure?.isUnreadable == true, "\(String(describing: failure))")
    }

    @Test func avatar_ofAProgressiveJPEG_isMade() throws {
        let output = try Output()
        let path = output.path("avatar.jpg")
        let made = try ImageResizer.avatar(try ImageFixture.progressiveJPEG.path, as: .jpeg, writingTo: path)
        #expect(made == ProcessedImage(format: .jpeg, width: 300, height: 300))
        let report = try ImageProbe.inspect(path, at: [(0.1, 0.5), (0.9, 0.5)])
        #expect(Self.isRed(report.colours[0]) && Self.isBlue(report.colours[1]), "\(report.colours)")
    }

    // MARK: measure

    /// What the background backfill reads: the header, turned as the orientation says.
    @Test func measure_readsTheUprightSizeFromTheHeader() throws {
        #expect(ImagePipeline.measure(try ImageFixture.gpsRotated.path, as: .jpeg).map { [$0.width, $0.height] } == [400, 600])
        #expect(ImagePipeline.measure(try ImageFixture.animatedGIF.path, as: .gif).map { [$0.width, $0.height] } == [120, 80])
        #expect(ImagePipeline.measure(try ImageFixture.heic.path, as: .heic).map { [$0.width, $0.height] } == [640, 480])
        #expect(ImagePipeline.measure(try ImageFixture.corrupt.path, as: .jpeg) == nil)
        #expect(ImagePipeline.measure("/nonexistent/image.jpg", as: .jpeg) == nil)
    }
}

private extension ImageFailure {
    var isTooLarge: Bool { if case .tooLarge = self { true } else { false } }
    var isUnreadable: Bool { if case .unreadable = self { true } else { false } }
}
