import Foundation
import Postgres
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The images the image tests upload, made by Tests/TestSupport/image_fixtures.py (Pillow,
/// pillow-heif) once per test process into a folder of its own: each carries what a test
/// looks for (GPS and a serial, an orientation tag, PNG text, frames, a lying header).
public enum ImageFixture: String, CaseIterable, Sendable {
    /// 600×400 stored, EXIF orientation 6 (upright 400×600), GPS, serial, Make/Model, a
    /// JPEG comment; left half red, right half blue as stored.
    case gpsRotated = "gps-rotated.jpg"
    /// 300×200 with tEXt Comment/Author and an iTXt XMP chunk.
    case textPNG = "text.png"
    /// Three frames of 120×80 each: red, green, blue.
    case animatedGIF = "animated.gif"
    case animatedWebP = "animated.webp"
    /// 640×480, as an iPhone takes them.
    case heic = "photo.heic"
    case wideJPEG = "wide.jpg"      // 2000×1000
    case smallJPEG = "small.jpg"    // 300×200
    case widePNG = "wide.png"       // 800×400
    case stillWebP = "still.webp"   // 400×300
    /// A PNG whose header claims 50000×50000.
    case bomb = "bomb.png"
    /// 9000×10: over 8,192 px on a side, far under 40 megapixels.
    case tooWide = "too-wide.png"
    /// A JPEG cut after a third of its bytes.
    case truncated = "truncated.jpg"
    /// JPEG's magic number, then nothing a decoder can use.
    case corrupt = "corrupt.jpg"
    /// A whole JPEG with 64 bytes of its scan data overwritten: markers intact, bad
    /// Huffman codes in the middle.
    case garbled = "garbled.jpg"
    /// 400×300, progressive.
    case progressiveJPEG = "progressive.jpg"
    /// A progressive JPEG cut after half of its bytes.
    case truncatedProgressive = "truncated-progressive.jpg"
    /// A PNG and a WebP cut after half of their bytes.
    case truncatedPNG = "truncated.png"
    case truncatedWebP = "truncated.webp"
    /// The animated GIF cut after two thirds of its bytes, inside a frame.
    case truncatedGIF = "truncated.gif"

    public var path: String {
        get throws { try ImageFixtures.directory() + "/" + rawValue }
    }

    public var bytes: [UInt8] {
        get throws { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
    }
}

public enum ImageFixtures {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Made on first use, by whichever test asks first; the others wait for it (a static
    /// let's initialiser runs once).
    private static let made: Result<String, Failure> = make()

    /// The folder holding every fixture.
    public static func directory() throws -> String { try made.get() }

    /// The venv's python with Pillow (scripts/python-tools.sh exports it).
    static func python() throws(Failure) -> String {
        guard let path = ProcessInfo.processInfo.environment["SMTP_RELAY_PYTHON"], !path.isEmpty else {
            throw Failure(description: "SMTP_RELAY_PYTHON is unset: run `source scripts/python-tools.sh` (it installs Pillow) before swift test")
        }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Failure(description: "SMTP_RELAY_PYTHON=\(path) is not an executable python: run `source scripts/python-tools.sh`")
        }
        return path
    }

    static func script(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(name).path
    }

    private static func make() -> Result<String, Failure> {
        Result { () throws(Failure) -> String in
            let directory = NSTemporaryDirectory() + "posts-image-fixtures-\(getpid())"
            do {
                try? FileManager.default.removeItem(atPath: directory)
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                let outcome = try ChildProcess.run(try python(), [script("image_fixtures.py"), directory])
                guard outcome.status == 0 else {
                    throw Failure(description: "image_fixtures.py failed (\(outcome.status)): \(outcome.output)")
                }
            } catch let failure as Failure {
                throw failure
            } catch {
                throw Failure(description: "could not make the image fixtures: \(error)")
            }
            for fixture in ImageFixture.allCases where !FileManager.default.fileExists(atPath: directory + "/" + fixture.rawValue) {
                throw Failure(description: "image_fixtures.py did not write \(fixture.rawValue)")
            }
            // The folder goes with the process (atexit takes no context: the pid names it again).
            atexit {
                try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "posts-image-fixtures-\(getpid())")
            }
            return directory
        }
    }
}

/// What an image file is, as read by Pillow (not libvips, the server's decoder) and by
/// exiftool: for checks that a stored image is upright, the right size and clean.
public enum ImageProbe {
    public struct Report: Sendable {
        /// Pillow's name: "JPEG", "PNG", "GIF", "WEBP", "HEIF".
        public let format: String
        public let width: Int
        public let height: Int
        public let frames: Int
        /// RGB at each point asked for, in order.
        public let colours: [[Int]]
        /// Pillow's `info` keys (`exif`, `comment`, `icc_profile`, PNG text keys, …).
        public let infoKeys: [String]
        /// A PNG's text chunks.
        public let textKeys: [String]
        /// How many EXIF tags Pillow found.
        public let exifTags: Int
    }

    /// Reads the file; `points` are fractions of the width and height (0.5, 0.25: the
    /// middle column, a quarter of the way down), read on the first frame.
    public static func inspect(_ path: String, at points: [(x: Double, y: Double)] = []) throws -> Report {
        let arguments = [ImageFixtures.script("image_probe.py"), path] + points.map { "\($0.x),\($0.y)" }
        let outcome = try ChildProcess.run(try ImageFixtures.python(), arguments)
        // Output is stdout and stderr together: the report is the last line.
        let last = outcome.output.split(separator: "\n").last.map(String.init) ?? ""
        guard outcome.status == 0,
              let object = try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any] else {
            throw ImageFixtures.Failure(description: "image_probe.py could not read \(path): \(outcome.output)")
        }
        return Report(format: object["format"] as? String ?? "", width: object["width"] as? Int ?? 0,
                      height: object["height"] as? Int ?? 0, frames: object["frames"] as? Int ?? 0,
                      colours: object["colours"] as? [[Int]] ?? [], infoKeys: object["info_keys"] as? [String] ?? [],
                      textKeys: object["text_keys"] as? [String] ?? [], exifTags: object["exif_tags"] as? Int ?? 0)
    }

    /// The same for bytes (an answer's body), through a temporary file.
    public static func inspect(bytes: [UInt8], at points: [(x: Double, y: Double)] = []) throws -> Report {
        try withTemporaryFile(bytes) { try inspect($0, at: points) }
    }

    /// `exiftool -json -a -G1`: every tag exiftool finds, keyed `Group:Tag` (`GPS:GPSLatitude`,
    /// `ExifIFD:SerialNumber`, `File:Comment`, `PNG:Author`).
    public static func exiftool(_ path: String) throws -> [String: Any] {
        let outcome = try ChildProcess.run("/usr/bin/env", ["exiftool", "-json", "-a", "-G1", path])
        guard let start = outcome.output.firstIndex(of: "["),
              let list = try? JSONSerialization.jsonObject(with: Data(outcome.output[start...].utf8)) as? [[String: Any]],
              let tags = list.first else {
            throw ImageFixtures.Failure(description: "exiftool could not read \(path) (is libimage-exiftool-perl installed?): \(outcome.output)")
        }
        return tags
    }

    public static func exiftool(bytes: [UInt8]) throws -> [String: Any] {
        try withTemporaryFile(bytes) { try exiftool($0) }
    }

    /// The tags that say something about the camera, the place or the person: EXIF (IFD0,
    /// ExifIFD, GPS, maker notes), XMP, IPTC, ICC, comments and PNG text. A clean image has
    /// none; what is left (File, JFIF, PNG's header fields, Composite sizes) is the image itself.
    public static func privateTags(_ tags: [String: Any]) -> [String] {
        let groups = ["IFD0", "IFD1", "ExifIFD", "GPS", "MakerNotes", "InteropIFD", "XMP", "IPTC", "ICC", "Photoshop"]
        let names = ["Comment", "Author", "Make", "Model", "SerialNumber", "GPSPosition", "GPSLatitude", "GPSLongitude", "Orientation"]
        return tags.keys.filter { key in
            let parts = key.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { return false }
            return groups.contains { parts[0].hasPrefix($0) } || names.contains(String(parts[1]))
        }.sorted()
    }

    private static func withTemporaryFile<T>(_ bytes: [UInt8], _ body: (String) throws -> T) throws -> T {
        let path = NSTemporaryDirectory() + "posts-image-probe-\(getpid())-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        return try body(path)
    }
}
