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
