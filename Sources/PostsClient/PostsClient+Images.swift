import Foundation

/// Images (API.md `GET /uploads/<name>`, "Images for phones"): posts and profiles carry
/// them as server paths; the server keeps smaller copies at five widths, and makes avatars.
extension PostsClient {
    /// The absolute URL of an image path such as `post.imageURL` (`/uploads/<name>`), for
    /// an image view or a cache; nil for nil.
    public func imageURL(_ path: String?) -> URL? {
        guard let path else { return nil }
        if let absolute = URL(string: path), absolute.scheme != nil { return absolute }
        return try? APIRequest("GET", path).url(baseURL: baseURL)
    }

    /// The URL of a copy of the image `width` pixels wide (`?width=N`): aspect kept, never
    /// scaled up (a narrower image comes at its own width), a still (an animation's first
    /// frame; a GIF's as a PNG). Each width has its own URL and is cached like the
    /// original. Only images this server stores (`/uploads/…`) have widths: any other URL
    /// (an `avatarURL` elsewhere) is given as it is; nil for nil.
    public func imageURL(_ path: String?, width: ImageWidth) -> URL? {
        guard let path else { return nil }
        guard path.hasPrefix(Self.uploadsPrefix) else { return imageURL(path) }
        return try? Self.imageRequest(path, width: width).url(baseURL: baseURL)
    }

    /// The bytes of an uploaded image, or of its copy at `width`.
    public func imageData(_ path: String, width: ImageWidth? = nil) async throws -> Data {
        try await perform(Self.imageRequest(path, width: width))
    }

    /// Makes the image the signed-in user's avatar and returns the profile, whose
    /// `avatarURL` now points to it. The server crops it square around its centre, at most
    /// 512 × 512 (a smaller one stays smaller), upright and without metadata; a GIF or an
    /// animated WebP gives its first frame (a GIF's as a PNG). A JPEG, PNG, GIF, WebP or
    /// HEIC image of at most 10 MiB: anything else is `unsupportedMediaType` (415), one over
    /// 40 megapixels or 8,192 px on a side `validationFailed` (422). The previous avatar's
    /// file is removed once nothing points to it.
    @discardableResult
    public func setAvatar(_ image: ImageUpload) async throws -> Profile {
        var form = MultipartForm()
        form.append(image.data, named: "image", filename: image.filename, contentType: image.contentType)
        return try await send(APIRequest("PUT", "/api/profiles/me/avatar", body: .multipart(form)),
                              as: ProfileEnvelope.self).profile
    }

    /// `setAvatar(_:)` with the image's parts given one by one.
    @discardableResult
    public func setAvatar(imageData: Data, filename: String, contentType: String) async throws -> Profile {
        try await setAvatar(ImageUpload(data: imageData, filename: filename, contentType: contentType))
    }

    /// Clears the signed-in user's avatar (`avatarURL` becomes nil) and returns the profile.
    @discardableResult
    public func removeAvatar() async throws -> Profile {
        try await send(APIRequest("DELETE", "/api/profiles/me/avatar"), as: ProfileEnvelope.self).profile
    }

    private static let uploadsPrefix = "/uploads/"

    private static func imageRequest(_ path: String, width: ImageWidth?) -> APIRequest {
        APIRequest("GET", path, query: width.map { [("width", String($0.rawValue))] } ?? [])
    }
}

/// The widths the server makes copies of an image at (`GET /uploads/<name>?width=N`):
/// thumbnails (160, 320), feed images on phones (640, 1080) and tablets (1600).
public enum ImageWidth: Int, Sendable, CaseIterable, Comparable, Codable {
    case w160 = 160
    case w320 = 320
    case w640 = 640
    case w1080 = 1080
    case w1600 = 1600

    /// The narrowest width of at least `pixels` (a view's width in points times the
    /// screen's scale), or the widest there is.
    public init(atLeast pixels: Int) {
        self = Self.allCases.first { $0.rawValue >= pixels } ?? .w1600
    }

    public var pixels: Int { rawValue }

    public static func < (lhs: ImageWidth, rhs: ImageWidth) -> Bool { lhs.rawValue < rhs.rawValue }
}
