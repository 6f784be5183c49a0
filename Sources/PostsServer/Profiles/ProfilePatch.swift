import Foundation
import HTTP

/// The fields of `PATCH /api/profiles/me`: any of them, each validated (422), with
/// `"avatar_url": null` telling "clear it" apart from leaving it out.
struct ProfilePatch: Decodable, Sendable {
    enum AvatarChange: Sendable, Equatable {
        case keep
        case clear
        case set(String)
    }

    private(set) var username: String?
    private(set) var fullName: String?
    private(set) var bio: String?
    private(set) var avatar = AvatarChange.keep

    private enum CodingKeys: String, CodingKey {
        case username, fullName = "full_name", bio, avatarURL = "avatar_url"
    }

    /// Only the avatar (`PUT` and `DELETE /api/profiles/me/avatar`).
    init(avatar: AvatarChange) {
        self.avatar = avatar
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        username = try container.decodeIfPresent(String.self, forKey: .username)
        fullName = try container.decodeIfPresent(String.self, forKey: .fullName)
        bio = try container.decodeIfPresent(String.self, forKey: .bio)
        if container.contains(.avatarURL) {
            avatar = try container.decodeNil(forKey: .avatarURL)
                ? .clear : .set(try container.decode(String.self, forKey: .avatarURL))
        }
    }

    static let maxFullName = 100
    static let maxBio = 500
    static let maxAvatarURL = 2048

    /// The same patch with every field checked and trimmed; 422 naming the first bad one.
    func validated() throws(APIError) -> ProfilePatch {
        var patch = self
        if let username { patch.username = try Username.validate(username) }
        patch.fullName = try fullName.map { text throws(APIError) in try Self.trimmed(text, "full_name", max: Self.maxFullName) }
        patch.bio = try bio.map { text throws(APIError) in try Self.trimmed(text, "bio", max: Self.maxBio) }
        if case .set(let url) = avatar {
            let trimmed = url.trimmingCharacters(in: .whitespacesAndNewlines)
            guard Self.isAvatarURL(trimmed) else {
                throw APIError.invalid("avatar_url must be an http(s) URL or a path under /uploads/")
            }
            patch.avatar = .set(trimmed)
        }
        return patch
    }

    private static func trimmed(_ text: String, _ field: String, max: Int) throws(APIError) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= max else {
            throw APIError.invalid("\(field) must be at most \(max) characters")
        }
        return trimmed
    }

    private static func isAvatarURL(_ text: String) -> Bool {
        guard text.utf8.count <= maxAvatarURL, !text.contains(where: { $0.isWhitespace }) else { return false }
        if text.hasPrefix("/uploads/") {
            let name = text.dropFirst("/uploads/".count)
            return !name.isEmpty && !name.contains("/") && !name.hasPrefix(".")
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else { return false }
        return true
    }
}
