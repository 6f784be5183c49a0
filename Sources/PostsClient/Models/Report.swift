import Foundation

/// What a report is about (API.md "Safety"): a post, a comment or a user. The moderation
/// log names its targets the same way, as `{"type":"post","id":12}`.
public enum ReportTarget: Codable, Sendable, Hashable {
    case post(Int)
    case comment(UUID)
    case user(Int)

    /// The member of `POST /api/reports` that names the target (exactly one is sent).
    var field: (String, JSONValue) {
        switch self {
        case .post(let id): ("post_id", .int(id))
        case .comment(let id): ("comment_id", .string(id.uuidString.lowercased()))
        case .user(let id): ("user_id", .int(id))
        }
    }

    private enum CodingKeys: String, CodingKey { case type, id }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "post": self = .post(try container.decode(Int.self, forKey: .id))
        case "comment": self = .comment(try container.decode(UUID.self, forKey: .id))
        case "user": self = .user(try container.decode(Int.self, forKey: .id))
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown target type \(other)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .post(let id): try container.encode("post", forKey: .type); try container.encode(id, forKey: .id)
        case .comment(let id): try container.encode("comment", forKey: .type); try container.encode(id.uuidString.lowercased(), forKey: .id)
        case .user(let id): try container.encode("user", forKey: .type); try container.encode(id, forKey: .id)
        }
    }
}

/// Why something is reported. Open-ended, like `ChangeType`: a moderator's app keeps
/// decoding the queue when the server learns a new reason.
public struct ReportReason: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let spam = ReportReason(rawValue: "spam")
    public static let harassment = ReportReason(rawValue: "harassment")
    public static let hate = ReportReason(rawValue: "hate")
    public static let nudity = ReportReason(rawValue: "nudity")
    public static let violence = ReportReason(rawValue: "violence")
    public static let selfHarm = ReportReason(rawValue: "self_harm")
    public static let illegal = ReportReason(rawValue: "illegal")
    public static let other = ReportReason(rawValue: "other")
}

/// Where a report is: `open` until a moderator resolves it (or another report on the same
/// target), then `resolved`.
public struct ReportStatus: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let open = ReportStatus(rawValue: "open")
    public static let resolved = ReportStatus(rawValue: "resolved")
}

/// The answer to `report(_:reason:details:)`: the caller's report. Reporting the same
/// target again while that report is open answers the same report (same `id`).
public struct Report: Codable, Sendable, Equatable, Identifiable {
    public let id: Int
    public let status: ReportStatus
    public let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, status
        case createdAt = "created_at"
    }
}
