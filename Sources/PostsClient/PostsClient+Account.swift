import Foundation

/// The signed-in account (API.md "Sessions and the account"): its sessions, a copy of its
/// data, and its deletion (what App Store guideline 5.1.1(v) asks apps to offer).
extension PostsClient {
    /// The account's live sessions, newest first; `current` marks this client's.
    public func sessions() async throws -> [Session] {
        try await send(APIRequest("GET", "/api/me/sessions"), as: SessionsEnvelope.self).sessions
    }

    /// Ends one session (signs that device out). `notFound` when it is not a live session
    /// of this account.
    public func revokeSession(id: Int) async throws {
        _ = try await send(APIRequest("DELETE", "/api/me/sessions/\(id)"), as: SuccessEnvelope.self)
    }

    /// Ends every session but this client's; how many were ended.
    @discardableResult
    public func revokeOtherSessions() async throws -> Int {
        try await send(APIRequest("DELETE", "/api/me/sessions"), as: RevokedEnvelope.self).revoked
    }

    /// Everything the server holds about the account, as the JSON document it sends
    /// (user, profile, sessions, posts, comments, likes, …): save it or share it as a file.
    public func exportAccount() async throws -> Data {
        try await perform(APIRequest("GET", "/api/me/export"))
    }

    /// Deletes the account and signs this client out. Posts others have replied under stay
    /// as tombstones (`Post.isTombstone`); everything else of the account goes.
    public func deleteAccount() async throws {
        _ = try await send(APIRequest("DELETE", "/api/me"), as: SuccessEnvelope.self)
        token = nil
    }
}

/// One signed-in device of the account (never its token).
public struct Session: Codable, Sendable, Equatable, Identifiable {
    public let id: Int
    /// What the app sent as `deviceID` when it signed in.
    public let deviceID: String?
    public let createdAt: Date
    public let lastUsedAt: Date
    /// The session of the client that asked.
    public let current: Bool

    enum CodingKeys: String, CodingKey {
        case id
        case deviceID = "device_id"
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case current
    }
}

struct SessionsEnvelope: Decodable { let sessions: [Session] }

struct RevokedEnvelope: Decodable { let revoked: Int }
