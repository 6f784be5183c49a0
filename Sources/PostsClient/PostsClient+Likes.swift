/// Likes (API.md "Likes"): one per user and post; like and unlike are idempotent.
extension PostsClient {
    @discardableResult
    public func like(postID: Int) async throws -> LikeState {
        try await send(APIRequest("PUT", "/api/posts/\(postID)/like"))
    }

    @discardableResult
    public func unlike(postID: Int) async throws -> LikeState {
        try await send(APIRequest("DELETE", "/api/posts/\(postID)/like"))
    }

    /// Flips the like. Not retried after a lost answer: a second flip would undo the first.
    @discardableResult
    public func toggleLike(postID: Int) async throws -> LikeState {
        try await send(APIRequest("POST", "/api/posts/\(postID)/like/toggle"))
    }

    /// The profiles that like a post, newest like first.
    public func likers(of postID: Int, pageSize: Int = 50) -> PageSequence<Profile> {
        pages(of: LikersEnvelope.self, "/api/posts/\(postID)/likes", pageSize: pageSize) {
            Page(items: $0.profiles, nextCursor: $0.nextCursor)
        }
    }
}

/// The answer to like, unlike and toggle: whether the caller likes the post now, and the
/// post's exact like count.
public struct LikeState: Codable, Sendable, Equatable {
    public let postID: Int
    public let liked: Bool
    public let likeCount: Int

    enum CodingKeys: String, CodingKey {
        case postID = "post_id"
        case liked
        case likeCount = "like_count"
    }

    public init(postID: Int, liked: Bool, likeCount: Int) {
        self.postID = postID
        self.liked = liked
        self.likeCount = likeCount
    }
}
