/// Why an image was not made. The server turns these into API.md's statuses.
public enum ImageFailure: Error, Sendable, Equatable {
    /// Not an image of an accepted format, or one its decoder cannot read to the end (415).
    case unreadable(String)
    /// Over `ImageLimits` by its header (422): it is never decoded.
    case tooLarge(String)
    /// The image was fine but could not be written (a full disk, say): the server's fault.
    case notWritten(String)
}

/// The largest image decoded at all (API.md): past these, a small file can claim gigabytes
/// of pixels (a decompression bomb), so the header alone decides.
public struct ImageLimits: Sendable {
    public var maxPixels: Int
    public var maxSide: Int

    public init(maxPixels: Int = 40_000_000, maxSide: Int = 8192) {
        self.maxPixels = maxPixels
        self.maxSide = maxSide
    }

    public static let api = ImageLimits()
}
