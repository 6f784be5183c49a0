import Foundation

/// The answer to `verifyCode`: who signed in, and the token (kept by the client too).
public struct SignIn: Codable, Sendable, Equatable {
    public let userID: Int
    public let email: String
    public let isNewUser: Bool
    /// Returned once by the server: store it (the Keychain) to restore a session with
    /// `PostsClient(baseURL:token:)`.
    public let token: String

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case email
        case isNewUser = "is_new_user"
        case token
    }
}

/// `GET /api/me`: the signed-in account and its profile.
public struct Me: Codable, Sendable, Equatable {
    public struct User: Codable, Sendable, Equatable {
        public let id: Int
        public let email: String
        /// Nil from servers before roles existed: treat it as `.user`.
        public let role: AccountRole?
        /// Nil from servers before suspension existed. A suspended account cannot sign in,
        /// so a signed-in client normally reads false.
        public let suspended: Bool?

        /// Whether the moderation calls are open to this account.
        public var isModerator: Bool { role == .moderator || role == .admin }
        public var isSuspended: Bool { suspended ?? false }
    }

    public let user: User
    public let profile: Profile
}

/// An account's role (API.md "Safety"), granted only by the server's operator
/// (`posts-server role EMAIL ROLE`). Open-ended, like `ChangeType`.
public struct AccountRole: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let user = AccountRole(rawValue: "user")
    public static let moderator = AccountRole(rawValue: "moderator")
    public static let admin = AccountRole(rawValue: "admin")
}

/// A message of the development mailbox (`GET /api/dev/mailbox`, trust mode only).
public struct MailboxMessage: Codable, Sendable, Equatable {
    public let to: String
    public let subject: String
    public let body: String
    public let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case to, subject, body
        case createdAt = "created_at"
    }

    /// The six-digit sign-in code the message carries, if any.
    public var loginCode: String? {
        var digits = ""
        for character in body + " " {
            if character.isASCII && character.isNumber {
                digits.append(character)
            } else if digits.count == 6 {
                return digits
            } else {
                digits = ""
            }
        }
        return nil
    }
}

/// What `POST /api/dev/seed` created.
public struct SeedCounts: Codable, Sendable, Equatable {
    public let users: Int
    public let posts: Int
    public let likes: Int
    public let comments: Int
    /// Nil from servers before comment likes.
    public let commentLikes: Int?

    enum CodingKeys: String, CodingKey {
        case users, posts, likes, comments
        case commentLikes = "comment_likes"
    }
}
