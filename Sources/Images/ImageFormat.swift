/// The image formats API.md accepts, recognised by their first bytes (their magic numbers),
/// never by the file name or the type the client declared.
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg, png, gif, webp
    /// HEIC/HEIF, what iPhones take: accepted, and stored as JPEG.
    case heic

    /// Enough bytes to tell every format apart (WebP's and HEIF's signatures end at byte 12).
    public static let signatureLength = 12

    /// The ISO base media brands of HEIF still images (HEVC-coded, or the generic
    /// image/sequence brands libheif reads).
    private static let heifBrands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"]

    public init?<Bytes: Collection>(sniffing bytes: Bytes) where Bytes.Element == UInt8 {
        let head = Array(bytes.prefix(Self.signatureLength))
        func starts(_ signature: some StringProtocol, at offset: Int = 0) -> Bool {
            starts(Array(signature.utf8), at: offset)
        }
        func starts(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + signature.count && Array(head[offset..<offset + signature.count]) == signature
        }
        if starts([0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if starts("GIF87a") || starts("GIF89a") {
            self = .gif
        } else if starts("RIFF") && starts("WEBP", at: 8) {
            self = .webp
        } else if starts("ftyp", at: 4), head.count == Self.signatureLength,
                  Self.heifBrands.contains(String(decoding: head[8..<12], as: UTF8.self)) {
            self = .heic
        } else {
            return nil
        }
    }

    /// The format a processed image of this format is written in.
    public var stored: ImageFormat { self == .heic ? .jpeg : self }

    /// The format of its sizes and avatars, which are stills: a GIF's first frame is a PNG.
    public var still: ImageFormat {
        switch self {
        case .gif: .png
        case .heic: .jpeg
        default: self
        }
    }

    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .gif: "gif"
        case .webp: "webp"
        case .heic: "heic"
        }
    }

    public var contentType: String { "image/\(rawValue)" }

    /// What API.md's errors call the formats.
    public static let acceptedNames = "a JPEG, PNG, GIF, WebP or HEIC image"
}
