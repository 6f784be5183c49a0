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

/// What `updateProfile(_:)` changes: only the fields that are set are sent.
public struct ProfileUpdate: Sendable, Equatable {
    /// 3 to 30 of `[a-z0-9_.]`, unique ignoring case (409 when taken).
    public var username: String?
    public var fullName: String?
    public var bio: String?
    public var avatarURL: Clearable<String>?

    public init(username: String? = nil, fullName: String? = nil, bio: String? = nil,
                avatarURL: Clearable<String>? = nil) {
        self.username = username
        self.fullName = fullName
        self.bio = bio
        self.avatarURL = avatarURL
    }

    var fields: [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = []
        if let username { fields.append(("username", .string(username))) }
        if let fullName { fields.append(("full_name", .string(fullName))) }
        if let bio { fields.append(("bio", .string(bio))) }
        if let avatarURL { fields.append(("avatar_url", avatarURL.json)) }
        return fields
    }
}
