import HTTP
import Images

extension MultipartBodyConsumer.Policy {
    /// Multipart forms whose files must be images (API.md: JPEG, PNG, GIF, WebP or HEIC by
    /// their magic bytes, within `limits`), streamed to `directory`: anything else is
    /// refused with 415 on its first bytes.
    public static func images(in directory: String, limits: Configuration.UploadLimits = .api) -> MultipartBodyConsumer.Policy {
        var policy = MultipartBodyConsumer.Policy(directory: directory, bodyLimit: limits.maxFormBytes,
                                                  maxFileBytes: limits.maxImageBytes) { part, firstBytes throws(HTTPError) in
            guard ImageFormat(sniffing: firstBytes) != nil else {
                throw APIError(.unsupportedMedia, "\(part.name) must be \(ImageFormat.acceptedNames)").httpError
            }
        }
        policy.inspectedPrefix = ImageFormat.signatureLength
        return policy
    }
}

extension ImageFailure {
    /// API.md's statuses: 415 for what is not a readable image, 422 for one too large to decode.
    var apiError: APIError {
        switch self {
        case .unreadable: APIError(.unsupportedMedia, "the image could not be read; send \(ImageFormat.acceptedNames)")
        case .tooLarge(let reason): APIError(.invalid, reason)
        case .notWritten: APIError(.failed, "the image could not be stored")
        }
    }
}
