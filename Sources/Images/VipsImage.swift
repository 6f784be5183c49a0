import Foundation
import CVips

/// One reference to a libvips image, given back when this goes. libvips computes lazily:
/// holding one costs its header (and whatever its pixels' pipeline buffers), not the pixels.
final class VipsImage {
    let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { cvips_unref(pointer) }

    /// The image a libvips call made; its failure (NULL) as `failure` with libvips' reason.
    static func made(_ pointer: OpaquePointer?, or failure: (String) -> ImageFailure) throws(ImageFailure) -> VipsImage {
        guard let pointer else { throw failure(Vips.takeError()) }
        return VipsImage(pointer)
    }

    var width: Int { Int(cvips_width(pointer)) }
    var height: Int { Int(cvips_height(pointer)) }
    /// The height of one frame: the height of a still image.
    var frameHeight: Int { Int(cvips_page_height(pointer)) }
    var frames: Int { max(1, Int(cvips_pages(pointer))) }
    var orientation: Int { Int(cvips_orientation(pointer)) }
    var hasAlpha: Bool { cvips_has_alpha(pointer) != 0 }
}

/// libvips itself, started once per process (see `cvips_start`: the loaders it leaves on).
enum Vips {
    private static let started: Result<Void, ImageFailure> = {
        if cvips_start() == 0 { return .success(()) }
        return .failure(.notWritten("libvips did not start: \(takeError())"))
    }()

    static func start() throws(ImageFailure) {
        try started.get()
    }

    /// libvips' reason for the last failure, cleared.
    static func takeError() -> String {
        guard let error = cvips_take_error() else { return "libvips gave no reason" }
        defer { cvips_free_error(error) }
        return String(cString: error).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func format(_ format: ImageFormat) -> CVipsFormat {
        switch format {
        case .jpeg: CVIPS_JPEG
        case .png: CVIPS_PNG
        case .gif: CVIPS_GIF
        case .webp: CVIPS_WEBP
        case .heic: CVIPS_HEIF
        }
    }
}
