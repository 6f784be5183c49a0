import CVips

/// What a processed image is: its format as written, and the size of one frame as it
/// displays (upright).
public struct ProcessedImage: Sendable, Equatable {
    public let format: ImageFormat
    public let width: Int
    public let height: Int
}

/// Every uploaded image is made again before it is kept (API.md "Images for phones"):
/// measured by its header first (a bomb is refused before a pixel is decoded), turned
/// upright, converted to sRGB, and written in its format with no metadata at all. Blocking
/// and CPU-bound: callers run it off the event loops, at most `IMAGE_CONCURRENCY` at once.
public enum ImagePipeline {
    /// JPEG and WebP quality: what phones' own photo apps and Mastodon use for photos.
    static let quality: Int32 = 85

    /// Reads `source` (an upload's temporary file, already sniffed as `format`) and writes
    /// the cleaned image to `destination`, in `format.stored`.
    public static func normalize(_ source: String, as format: ImageFormat, to destination: String,
                                 limits: ImageLimits = .api) throws(ImageFailure) -> ProcessedImage {
        try Vips.start()
        let animated = format == .gif || format == .webp
        let header = try open(source, as: format, allFrames: animated, sequential: true)
        try check(header, limits)
        if animated { try checkDecodes(source, as: format, allFrames: true) }
        // A turn by 90 degrees needs the pixels in any order: open it again for that.
        let upright = header.orientation > 1
        let loaded = upright ? try open(source, as: format, allFrames: animated, sequential: false) : header
        var image = upright ? try VipsImage.made(cvips_autorotate(loaded.pointer), or: ImageFailure.unreadable) : loaded
        image = try VipsImage.made(cvips_to_srgb(image.pointer), or: ImageFailure.unreadable)
        if format.stored == .jpeg && image.hasAlpha {
            image = try VipsImage.made(cvips_flatten_white(image.pointer), or: ImageFailure.unreadable)
        }
        image = try VipsImage.made(cvips_without_metadata(image.pointer), or: ImageFailure.unreadable)
        try save(image, as: format.stored, to: destination)
        return ProcessedImage(format: format.stored, width: image.width, height: image.frameHeight)
    }

    /// The size of a stored image as it displays, from its header alone; nil if it cannot be read.
    public static func measure(_ path: String, as format: ImageFormat) -> (width: Int, height: Int)? {
        guard (try? Vips.start()) != nil,
              let image = try? open(path, as: format, allFrames: false, sequential: true) else { return nil }
        let turned = (5...8).contains(image.orientation)
        return turned ? (image.frameHeight, image.width) : (image.width, image.frameHeight)
    }

    static func open(_ path: String, as format: ImageFormat, allFrames: Bool,
                     sequential: Bool) throws(ImageFailure) -> VipsImage {
        // Every upload, a post's image or an avatar, is opened here first.
        if format == .png, !PNGChunks.fit(file: path) {
            throw .unreadable("a PNG chunk is longer than the file")
        }
        if format == .gif, !GIFBlocks.complete(file: path) {
            throw .unreadable("the GIF ends in the middle of a block")
        }
        let pointer = cvips_open(path, Vips.format(format), allFrames ? 1 : 0, sequential ? 1 : 0)
        return try VipsImage.made(pointer) { reason in .unreadable(reason) }
    }

    /// libvips 8.14's WebP encoder leaks its animation encoder when the decoder fails
    /// halfway (found by fuzzing: ~115 KB a time, which a stream of broken uploads would pile
    /// up). GIF and WebP uploads are decoded once to the end first, keeping no pixels, so a
    /// damaged one is refused before an encoder exists. They are small (40 MP at most, all
    /// frames) and rare: the decode costs twice for them only.
    static func checkDecodes(_ path: String, as format: ImageFormat, allFrames: Bool) throws(ImageFailure) {
        guard cvips_decodes(path, Vips.format(format), allFrames ? 1 : 0) == 0 else { throw .unreadable(Vips.takeError()) }
    }

    /// API.md's limits, on the header: each side of a frame, and the pixels of all frames.
    static func check(_ image: VipsImage, _ limits: ImageLimits) throws(ImageFailure) {
        let width = image.width, frameHeight = image.frameHeight, frames = image.frames
        guard width > 0, frameHeight > 0 else { throw .unreadable("the image has no pixels") }
        if width > limits.maxSide || frameHeight > limits.maxSide {
            throw .tooLarge("the image is \(width) x \(frameHeight) pixels; at most \(limits.maxSide) on a side")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: frameHeight * frames)
        if overflow || pixels > limits.maxPixels {
            throw .tooLarge("the image has more than \(limits.maxPixels / 1_000_000) megapixels")
        }
    }

    /// Writes the image. The pixels are decoded now: a decoder's failure here means the
    /// file is damaged (415); a failed write of a readable image is ours.
    static func save(_ image: VipsImage, as format: ImageFormat, to destination: String) throws(ImageFailure) {
        guard cvips_save(image.pointer, destination, Vips.format(format), quality) == 0 else {
            let reason = Vips.takeError()
            throw Self.isWriteFailure(reason) ? .notWritten(reason) : .unreadable(reason)
        }
    }

    /// libvips reports a failed write of the destination as "unable to write" or with the
    /// system's words; anything else comes from decoding.
    private static func isWriteFailure(_ reason: String) -> Bool {
        let lowered = reason.lowercased()
        guard lowered.contains("unable to write") || lowered.contains("no space") || lowered.contains("permission denied")
            || lowered.contains("unable to open") else { return false }
        // libpng says "unable to write to target" after a read error of the source too.
        return !lowered.contains("read error") && !lowered.contains("premature end") && !lowered.contains("corrupt")
    }
}
