import Foundation

/// A report in the moderators' queue (`GET /api/moderation/reports`): who reported what,
/// why, and the target as it is now.
public struct ModerationReport: Codable, Sendable, Equatable, Identifiable {
    public let id: Int
    public let status: ReportStatus
    public let reason: ReportReason
    /// The reporter's own words; empty when none were given.
    public let details: String
    public let createdAt: Date
    public let reporter: Profile
    /// Nil only for a kind of target this client does not know yet.
    public let target: ReportedContent?
    /// Which post, comment or user was reported: kept when the content itself is gone.
    /// Nil only for a kind of target this client does not know yet (or an older server).
    public let targetReference: ReportTarget?
    /// How many reports on the same target are open (resolving one closes them all).
    public let reportsOnTarget: Int

    enum CodingKeys: String, CodingKey {
        case id, status, reason, details
        case createdAt = "created_at"
        case reporter, target
        case reportsOnTarget = "reports_on_target"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        status = try container.decode(ReportStatus.self, forKey: .status)
        reason = try container.decode(ReportReason.self, forKey: .reason)
        details = try container.decodeIfPresent(String.self, forKey: .details) ?? ""
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        reporter = try container.decode(Profile.self, forKey: .reporter)
        // A newer server's kind of target must not make the whole queue undecodable.
        target = try? container.decode(ReportedContent.self, forKey: .target)
        targetReference = try? container.decode(ReportTarget.self, forKey: .target)
        reportsOnTarget = try container.decode(Int.self, forKey: .reportsOnTarget)
    }
}

/// What a queued report is about, as it is now: nil inside once it no longer exists. A
/// suspended author's content still shows here; a removed post that others replied under
/// shows as its tombstone.
public enum ReportedContent: Codable, Sendable, Equatable {
    case post(Post?)
    case comment(Comment?)
    case user(Profile?)

    private enum CodingKeys: String, CodingKey { case type, post, comment, profile }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "post": self = .post(try container.decodeIfPresent(Post.self, forKey: .post))
        case "comment": self = .comment(try container.decodeIfPresent(Comment.self, forKey: .comment))
        case "user": self = .user(try container.decodeIfPresent(Profile.self, forKey: .profile))
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown target type \(other)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .post(let post): try container.encode("post", forKey: .type); try container.encode(post, forKey: .post)
        case .comment(let comment): try container.encode("comment", forKey: .type); try container.encode(comment, forKey: .comment)
        case .user(let profile): try container.encode("user", forKey: .type); try container.encode(profile, forKey: .profile)
        }
    }
}

/// What a moderator does with a report (`resolveReport(id:action:note:)`).
public enum ReportResolution: String, Codable, Sendable, Hashable, CaseIterable {
    /// Closes the reports on the target and changes nothing else.
    case dismiss
    /// Deletes the reported post or comment (a post with others' replies below becomes a
    /// tombstone). A user cannot be removed: suspend instead (`validationFailed`).
    case remove
    /// Suspends the author of the reported post or comment, or the reported user.
    case suspend
}

/// One recorded moderator action (`GET /api/moderation/log`).
public struct ModerationLogEntry: Codable, Sendable, Equatable, Identifiable {
    public let id: Int
    public let action: ModerationAction
    /// Nil once the moderator's account is gone.
    public let moderator: Profile?
    /// Nil only for a kind of target this client does not know yet.
    public let target: ReportTarget?
    /// The report the action resolved; nil for a direct suspend or unsuspend.
    public let reportID: Int?
    /// The moderator's note; empty when none was given.
    public let note: String
    public let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, action, moderator, target
        case reportID = "report_id"
        case note
        case createdAt = "created_at"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        action = try container.decode(ModerationAction.self, forKey: .action)
        moderator = try container.decodeIfPresent(Profile.self, forKey: .moderator)
        // As in the queue: an unknown kind of target leaves the rest of the log readable.
        target = try? container.decode(ReportTarget.self, forKey: .target)
        reportID = try container.decodeIfPresent(Int.self, forKey: .reportID)
        note = try container.decodeIfPresent(String.self, forKey: .note) ?? ""
        createdAt = try container.decode(Date.self, forKey: .createdAt)
    }
}

/// A logged action: a report's resolution, or a direct suspension. Open-ended, like
/// `ChangeType`, so that the log stays readable when the server records something new.
public struct ModerationAction: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let dismiss = ModerationAction(rawValue: "dismiss")
    public static let remove = ModerationAction(rawValue: "remove")
    public static let suspend = ModerationAction(rawValue: "suspend")
    public static let unsuspend = ModerationAction(rawValue: "unsuspend")
}

/// The answer to `suspend(userID:note:)` and `unsuspend(userID:note:)`: the user's state now.
public struct SuspensionState: Codable, Sendable, Equatable {
    public let userID: Int
    public let suspended: Bool

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case suspended
    }

    public init(userID: Int, suspended: Bool) {
        self.userID = userID
        self.suspended = suspended
    }
}
