import Foundation

/// The client of posts-server's HTTP API (see API.md).
public final class PostsClient: Sendable {
    public let baseURL: URL

    public init(baseURL: URL) {
        self.baseURL = baseURL
    }
}
