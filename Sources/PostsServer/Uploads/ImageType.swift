import HTTP

/// The image formats API.md accepts, recognised by their first bytes (their magic numbers),
/// never by the file name or the type the client declared.
public enum ImageType: String, Sendable, CaseIterable {
    case jpeg, png, gif, webp

    /// Enough bytes to tell every format apart (WebP's signature ends at byte 12).
    public static let signatureLength = 12

    public init?<Bytes: Collection>(sniffing bytes: Bytes) where Bytes.Element == UInt8 {
        let head = Array(bytes.prefix(Self.signatureLength))
        func starts(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + signature.count && Array(head[offset..<offset + signature.count]) == signature
        }
        if starts([0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) {
            self = .gif
        } else if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) {
            self = .webp
        } else {
            return nil
        }
    }

    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .gif: "gif"
        case .webp: "webp"
        }
    }

    public var contentType: String { "image/\(rawValue)" }
}

extension MultipartBodyConsumer.Policy {
    /// Multipart forms whose files must be images (API.md: JPEG, PNG, GIF or WebP by their
    /// magic bytes, within `limits`), streamed to `directory`: anything else is refused with
    /// 415 on its first bytes.
    public static func images(in directory: String, limits: Configuration.UploadLimits = .api) -> MultipartBodyConsumer.Policy {
        var policy = MultipartBodyConsumer.Policy(directory: directory, bodyLimit: limits.maxFormBytes,
                                                  maxFileBytes: limits.maxImageBytes) { part, firstBytes throws(HTTPError) in
            guard ImageType(sniffing: firstBytes) != nil else {
                throw APIError(.unsupportedMedia, "\(part.name) must be a JPEG, PNG, GIF or WebP image").httpError
            }
        }
        policy.inspectedPrefix = ImageType.signatureLength
        return policy
    }
}
