// libFuzzer target: the bytes of an uploaded image, as the server takes them (a post's image
// and an avatar), and the name of an upload's URL (`/uploads/<name>`). Whatever the bytes:
// no crash, no hang (libFuzzer's -timeout), no leak, and one of three outcomes: not an
// accepted format (415 on the first bytes), refused by the pipeline as unreadable (415) or
// too large (422), or an image written in its stored format with the size reported.
// libvips is not instrumented: coverage comes from the seed corpus (real images of every
// accepted format, fuzz/corpus/image-upload) more than from feedback.
import Foundation
import Images
@testable import PostsServer

private let folder: String = {
    let path = NSTemporaryDirectory() + "posts-server-fuzz-image-\(getpid())"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}()

/// Small limits: a seed's 4,000 x 4,000 mutation is refused instead of decoded for seconds.
private let limits = ImageLimits(maxPixels: 4_000_000, maxSide: 4096)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImageUpload(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    if let name = StoredImageName(String(decoding: bytes.prefix(64), as: UTF8.self)) {
        guard StoredImageName(name.name) == name, !name.name.contains("/") else { fatalError("\(name) does not round-trip") }
    }
    guard let format = ImageFormat(sniffing: bytes) else { return 0 }
    let source = folder + "/upload", made = folder + "/made"
    guard FileManager.default.createFile(atPath: source, contents: Data(bytes)) else { fatalError("cannot write \(source)") }
    defer { unlink(made) }
    avatar(from: source, format, to: made)
    do {
        let image = try ImagePipeline.normalize(source, as: format, to: made, limits: limits)
        let written = FileManager.default.contents(atPath: made) ?? Data()
        guard ImageFormat(sniffing: written) == format.stored, image.format == format.stored else {
            fatalError("\(format) was written as something else")
        }
        guard image.width > 0, image.height > 0, image.width <= limits.maxSide, image.height <= limits.maxSide else {
            fatalError("\(format) made an image of \(image.width) x \(image.height)")
        }
    } catch .notWritten(let reason) {
        fatalError("a readable \(format) could not be written: \(reason)")
    } catch {
        // Unreadable or too large: the answers API.md gives.
    }
    return 0
}

/// The same bytes as an avatar: checked the same way, then a square thumbnail.
private func avatar(from source: String, _ format: ImageFormat, to made: String) {
    do {
        let image = try ImageResizer.avatar(source, as: format, side: 64, writingTo: made, limits: limits)
        guard image.width == image.height, image.width <= 64, image.format == format.still else {
            fatalError("\(format) avatar is \(image.width) x \(image.height) \(image.format)")
        }
    } catch .notWritten(let reason) {
        fatalError("a readable \(format) avatar could not be written: \(reason)")
    } catch {
        // Unreadable or too large.
    }
    unlink(made)
}
