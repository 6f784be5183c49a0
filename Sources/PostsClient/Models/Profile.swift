import Foundation

/// A user's public profile (API.md "Objects"), with its counters (API.md "Following").
public struct Profile: Codable, Sendable, Equatable, Hashable, Identifiable {
    public let userID: Int
    public let username: String
    public let fullName: String
    public let bio: String
    public let avatarURL: String?
    public let createdAt: Date
    /// Exact, kept by the server; 0 from a server older than follows.
    public let followersCount: Int
    public let followingCount: Int
    public let postsCount: Int
    /// Whether the caller follows this user: on authenticated reads of a profile and of the
    /// followers and following pages; nil elsewhere.
    public let followedByMe: Bool?
    /// `user@domain` of an account on another server of the fediverse; the username for one
    /// of this server's (API.md "Remote people").
    public let acct: String
    /// Whether the account lives on another server (federation).
    public let isRemote: Bool

    public var id: Int { userID }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case username
        case fullName = "full_name"
        case bio
        case avatarURL = "avatar_url"
        case createdAt = "created_at"
        case followersCount = "followers_count"
        case followingCount = "following_count"
        case postsCount = "posts_count"
        case followedByMe = "followed_by_me"
        case acct
        case isRemote = "remote"
    }

    public init(userID: Int, username: String, fullName: String, bio: String, avatarURL: String?, createdAt: Date,
                followersCount: Int = 0, followingCount: Int = 0, postsCount: Int = 0, followedByMe: Bool? = nil,
                acct: String? = nil, isRemote: Bool = false) {
        self.userID = userID
        self.username = username
        self.fullName = fullName
        self.bio = bio
        self.avatarURL = avatarURL
        self.createdAt = createdAt
        self.followersCount = followersCount
        self.followingCount = followingCount
        self.postsCount = postsCount
        self.followedByMe = followedByMe
        self.acct = acct ?? username
        self.isRemote = isRemote
    }

    /// The counters may be absent (a server from before follows): 0.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        userID = try container.decode(Int.self, forKey: .userID)
        username = try container.decode(String.self, forKey: .username)
        fullName = try container.decode(String.self, forKey: .fullName)
        bio = try container.decode(String.self, forKey: .bio)
        avatarURL = try container.decodeIfPresent(String.self, forKey: .avatarURL)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        followersCount = try container.decodeIfPresent(Int.self, forKey: .followersCount) ?? 0
        followingCount = try container.decodeIfPresent(Int.self, forKey: .followingCount) ?? 0
        postsCount = try container.decodeIfPresent(Int.self, forKey: .postsCount) ?? 0
        followedByMe = try container.decodeIfPresent(Bool.self, forKey: .followedByMe)
        // A server from before federation: one of its own.
        acct = try container.decodeIfPresent(String.self, forKey: .acct) ?? username
        isRemote = try container.decodeIfPresent(Bool.self, forKey: .isRemote) ?? false
    }
}
