import Foundation

/// Blocks, mutes and reports (API.md "Safety"): what every signed-in user has to keep
/// others away and to alert the moderators. Block, mute and their undoing are idempotent.
extension PostsClient {
    /// Blocks a user, both ways: neither sees the other's posts, comments or likes any more
    /// (a single read is `notFound`), and neither can like, comment on or post under the
    /// other's posts (`forbidden`, `refusal == .blocked`). Follows between the two end.
    /// Blocking oneself is `validationFailed`; an unknown user `notFound`.
    @discardableResult
    public func block(userID: Int) async throws -> BlockState {
        try await send(APIRequest("PUT", "/api/users/\(userID)/block"))
    }

    /// Takes the caller's block back; everything it hid comes back as it was.
    @discardableResult
    public func unblock(userID: Int) async throws -> BlockState {
        try await send(APIRequest("DELETE", "/api/users/\(userID)/block"))
    }

    /// Mutes a user, one way and silently: the caller's lists, feeds and streams leave out
    /// its posts and comments; a single read still works, and the muted user notices nothing.
    @discardableResult
    public func mute(userID: Int) async throws -> MuteState {
        try await send(APIRequest("PUT", "/api/users/\(userID)/mute"))
    }

    @discardableResult
    public func unmute(userID: Int) async throws -> MuteState {
        try await send(APIRequest("DELETE", "/api/users/\(userID)/mute"))
    }

    /// The profiles of the users the caller blocked, newest block first. Only the caller's
    /// own blocks: who blocked the caller is never told.
    public func blockedUsers(pageSize: Int = 50) -> PageSequence<Profile> {
        pages(of: ProfilesPageEnvelope.self, "/api/me/blocks", pageSize: pageSize) {
            Page(items: $0.profiles, nextCursor: $0.nextCursor)
        }
    }

    /// The profiles of the users the caller muted, newest mute first.
    public func mutedUsers(pageSize: Int = 50) -> PageSequence<Profile> {
        pages(of: ProfilesPageEnvelope.self, "/api/me/mutes", pageSize: pageSize) {
            Page(items: $0.profiles, nextCursor: $0.nextCursor)
        }
    }

    /// Reports a post, a comment or a user to the moderators. `details` (at most 1,000
    /// characters, else `validationFailed`) is what the reporter adds in its own words. A
    /// target that does not exist is `notFound`. Reporting the same target again while the
    /// first report is open answers that report (same `id`), which is also why a retry
    /// after a lost answer is safe.
    @discardableResult
    public func report(_ target: ReportTarget, reason: ReportReason, details: String? = nil) async throws -> Report {
        var fields: [(String, JSONValue)] = [target.field, ("reason", .string(reason.rawValue))]
        if let details { fields.append(("details", .string(details))) }
        return try await send(APIRequest.json("POST", "/api/reports", fields).repeatable(), as: ReportEnvelope.self).report
    }
}

/// The answer to block and unblock: whether the caller blocks the user now.
public struct BlockState: Codable, Sendable, Equatable {
    public let userID: Int
    public let blocked: Bool

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case blocked
    }

    public init(userID: Int, blocked: Bool) {
        self.userID = userID
        self.blocked = blocked
    }
}

/// The answer to mute and unmute: whether the caller mutes the user now.
public struct MuteState: Codable, Sendable, Equatable {
    public let userID: Int
    public let muted: Bool

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case muted
    }

    public init(userID: Int, muted: Bool) {
        self.userID = userID
        self.muted = muted
    }
}
