import CVips

/// Smaller copies of stored images: the widths API.md serves (`?width=N`) and square
/// avatars. Decoded with shrink-on-load (a JPEG is read at 1/2, 1/4 or 1/8 of its size
/// when that is enough), so a 24-megapixel photo costs a few megabytes here.
public enum ImageResizer {
    /// The widths `?width=N` may ask for.
    public static let widths: Set<Int> = [160, 320, 640, 1080, 1600]

    /// A stored image (already upright and clean) `width` wide at most, aspect kept, never
    /// scaled up; written as `format.still`: an animation's first frame.
    public static func resize(_ source: String, as format: ImageFormat, toWidth width: Int,
                              writingTo destination: String) throws(ImageFailure) -> ProcessedImage {
        try Vips.start()
        let image = try VipsImage.made(cvips_thumbnail(source, Vips.format(format), Int32(width), 0), or: ImageFailure.unreadable)
        return try finish(image, as: format.still, to: destination)
    }

    /// An avatar from an upload (any accepted format, sniffed as `format`): checked like
    /// every upload, cropped square around the centre, at most `side` pixels on a side
    /// (a smaller one stays smaller), upright, sRGB, no metadata.
    public static func avatar(_ source: String, as format: ImageFormat, side: Int = 512,
                              writingTo destination: String, limits: ImageLimits = .api) throws(ImageFailure) -> ProcessedImage {
        try Vips.start()
        let header = try ImagePipeline.open(source, as: format, allFrames: format == .gif || format == .webp, sequential: true)
        try ImagePipeline.check(header, limits)
        if format == .gif || format == .webp { try ImagePipeline.checkDecodes(source, as: format, allFrames: false) }
        let square = min(side, header.width, header.frameHeight)
        let image = try VipsImage.made(cvips_thumbnail(source, Vips.format(format), Int32(square), 1), or: ImageFailure.unreadable)
        return try finish(image, as: format.still, to: destination)
    }

    private static func finish(_ made: VipsImage, as format: ImageFormat,
                               to destination: String) throws(ImageFailure) -> ProcessedImage {
        var image = try VipsImage.made(cvips_to_srgb(made.pointer), or: ImageFailure.unreadable)
        if format == .jpeg && image.hasAlpha {
            image = try VipsImage.made(cvips_flatten_white(image.pointer), or: ImageFailure.unreadable)
        }
        image = try VipsImage.made(cvips_without_metadata(image.pointer), or: ImageFailure.unreadable)
        try ImagePipeline.save(image, as: format, to: destination)
        return ProcessedImage(format: format, width: image.width, height: image.height)
    }
}
