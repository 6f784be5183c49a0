import Foundation

/// A comment on a post, with its author's whole profile (API.md "Objects").
public struct Comment: Codable, Sendable, Equatable, Hashable, Identifiable {
    public let id: UUID
    public let postID: Int
    public let userID: Int
    public let body: String
    public let createdAt: Date
    public let profile: Profile

    enum CodingKeys: String, CodingKey {
        case id
        case postID = "post_id"
        case userID = "user_id"
        case body
        case createdAt = "created_at"
        case profile
    }

    public init(id: UUID, postID: Int, userID: Int, body: String, createdAt: Date, profile: Profile) {
        self.id = id
        self.postID = postID
        self.userID = userID
        self.body = body
        self.createdAt = createdAt
        self.profile = profile
    }
}
