import Foundation

/// A user's public profile (API.md "Objects").
public struct Profile: Codable, Sendable, Equatable, Hashable, Identifiable {
    public let userID: Int
    public let username: String
    public let fullName: String
    public let bio: String
    public let avatarURL: String?
    public let createdAt: Date

    public var id: Int { userID }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case username
        case fullName = "full_name"
        case bio
        case avatarURL = "avatar_url"
        case createdAt = "created_at"
    }

    public init(userID: Int, username: String, fullName: String, bio: String, avatarURL: String?, createdAt: Date) {
        self.userID = userID
        self.username = username
        self.fullName = fullName
        self.bio = bio
        self.avatarURL = avatarURL
        self.createdAt = createdAt
    }
}
