import Foundation

/// Images (API.md `GET /uploads/<name>`): posts carry them as server paths.
extension PostsClient {
    /// The absolute URL of an image path such as `post.imageURL` (`/uploads/<name>`), for
    /// an image view or a cache; nil for nil.
    public func imageURL(_ path: String?) -> URL? {
        guard let path else { return nil }
        if let absolute = URL(string: path), absolute.scheme != nil { return absolute }
        return try? APIRequest("GET", path).url(baseURL: baseURL)
    }

    /// The bytes of an uploaded image.
    public func imageData(_ path: String) async throws -> Data {
        try await perform(APIRequest("GET", path))
    }
}
