import Foundation

/// Follows and the home feed (API.md "Following"). Follow and unfollow are idempotent.
extension PostsClient {
    /// Follows a user: from now on its posts are in the caller's `feed()` (its newest
    /// 1,000 at once). Following oneself is `validationFailed`, an unknown user
    /// `notFound`, a user on the other side of a block `forbidden`.
    @discardableResult
    public func follow(userID: Int) async throws -> FollowState {
        try await send(APIRequest("PUT", "/api/users/\(userID)/follow"))
    }

    /// Stops following a user; its posts leave the caller's feed.
    @discardableResult
    public func unfollow(userID: Int) async throws -> FollowState {
        try await send(APIRequest("DELETE", "/api/users/\(userID)/follow"))
    }

    /// The users who follow `userID`, newest follow first (`followedByMe` set when signed in).
    public func followers(of userID: Int, pageSize: Int = 50) -> PageSequence<Profile> {
        pages(of: ProfilesPageEnvelope.self, "/api/users/\(userID)/followers", pageSize: pageSize) {
            Page(items: $0.profiles, nextCursor: $0.nextCursor)
        }
    }

    /// The users `userID` follows, newest follow first.
    public func following(of userID: Int, pageSize: Int = 50) -> PageSequence<Profile> {
        pages(of: ProfilesPageEnvelope.self, "/api/users/\(userID)/following", pageSize: pageSize) {
            Page(items: $0.profiles, nextCursor: $0.nextCursor)
        }
    }

    /// The caller's home feed: the posts, of any depth, of the people it follows and its
    /// own, newest first, without blocked, muted or suspended authors.
    public func feed(pageSize: Int = 50) -> PageSequence<Post> {
        pages(of: PostsPageEnvelope.self, "/api/feed", pageSize: pageSize) {
            Page(items: $0.posts, nextCursor: $0.nextCursor)
        }
    }
}

/// The answer to follow and unfollow: whether the caller follows the user now, and the
/// user's follower count after it.
public struct FollowState: Codable, Sendable, Equatable {
    public let userID: Int
    public let following: Bool
    public let followersCount: Int
    /// A follow of an account on another server, asked and not yet accepted by it
    /// (federation): `following` is false until it is.
    public let isPending: Bool

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case following
        case followersCount = "followers_count"
        case isPending = "pending"
    }

    public init(userID: Int, following: Bool, followersCount: Int, isPending: Bool = false) {
        self.userID = userID
        self.following = following
        self.followersCount = followersCount
        self.isPending = isPending
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        userID = try container.decode(Int.self, forKey: .userID)
        following = try container.decode(Bool.self, forKey: .following)
        followersCount = try container.decode(Int.self, forKey: .followersCount)
        isPending = try container.decodeIfPresent(Bool.self, forKey: .isPending) ?? false
    }
}
