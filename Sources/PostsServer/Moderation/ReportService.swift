import Foundation
import Postgres

/// `POST /api/reports` (API.md "Safety"): a report of a post, a comment or a user, by a
/// signed-in user; one open report per reporter and target.
struct ReportService: Sendable {
    var pool: ConnectionPool
    /// What a report is stamped with.
    var clock = ServerClock()

    enum Target: Sendable, Equatable {
        case post(Int64)
        case comment(UUID)
        case user(Int64)

        /// How the target is kept in `reports.target_key` and `moderation_log.target_key`.
        var key: String {
            switch self {
            case .post(let id): "post:\(id)"
            case .comment(let id): "comment:\(id.uuidString.lowercased())"
            case .user(let id): "user:\(id)"
            }
        }

        init?(key: String) {
            let parts = key.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            switch parts[0] {
            case "post": guard let id = Int64(parts[1]) else { return nil }; self = .post(id)
            case "comment": guard let id = UUID(uuidString: String(parts[1])) else { return nil }; self = .comment(id)
            case "user": guard let id = Int64(parts[1]) else { return nil }; self = .user(id)
            default: return nil
            }
        }
    }

    static let reasons: Set<String> = ["spam", "harassment", "hate", "nudity", "violence", "self_harm", "illegal", "other"]
    static let maxDetails = 1000

    /// The report, and whether it is new (201) or the reporter's open one on that target (200).
    func report(_ target: Target, reason: String, details: String, by caller: Caller) throws -> (json: [UInt8], created: Bool) {
        guard Self.reasons.contains(reason) else {
            throw APIError.invalid("reason must be one of \(Self.reasons.sorted().joined(separator: ", "))")
        }
        guard details.count <= Self.maxDetails else { throw APIError.invalid("details must be at most \(Self.maxDetails) characters") }
        let exists: SQLQuery = switch target {
        case .post(let id): "SELECT EXISTS (SELECT 1 FROM posts WHERE id = \(id)) AS found"
        case .comment(let id): "SELECT EXISTS (SELECT 1 FROM comments WHERE id = \(id)) AS found"
        case .user(let id): "SELECT EXISTS (SELECT 1 FROM users WHERE id = \(id)) AS found"
        }
        let (postID, commentID, userID) = Self.columns(target)
        return try pool.withTransaction { connection in
            guard try connection.query(exists).firstRow().decode("found", as: Bool.self) else {
                throw APIError.notFound("no such \(Self.typeName(target))")
            }
            let inserted = try connection.query("""
                INSERT INTO reports (reporter_id, post_id, comment_id, user_id, target_key, reason, details, created_at,
                                     target_user_id)
                VALUES (\(caller.userID), \(postID), \(commentID), \(userID), \(target.key), \(reason), \(details), \(clock.now),
                        -- Whose content it is, kept should the content be removed (migration 0025).
                        coalesce(\(userID)::bigint, (SELECT user_id FROM posts WHERE id = \(postID)::bigint),
                                 (SELECT user_id FROM comments WHERE id = \(commentID)::uuid)))
                ON CONFLICT (reporter_id, target_key) WHERE status = 'open' DO NOTHING
                RETURNING id, status, created_at
                """).first
            let row = try inserted ?? connection.query("""
                SELECT id, status, created_at FROM reports
                WHERE reporter_id = \(caller.userID) AND target_key = \(target.key) AND status = 'open'
                """).firstRow()
            var report = JSONObject()
            report.add("id", try row.decode("id", as: Int64.self))
            report.add("status", try row.decode("status", as: String.self))
            report.add("created_at", try row.decode("created_at", as: PostgresTimestamp.self))
            return (report.finished, inserted != nil)
        }
    }

    static func typeName(_ target: Target) -> String {
        switch target {
        case .post: "post"
        case .comment: "comment"
        case .user: "user"
        }
    }

    private static func columns(_ target: Target) -> (Int64?, UUID?, Int64?) {
        switch target {
        case .post(let id): (id, nil, nil)
        case .comment(let id): (nil, id, nil)
        case .user(let id): (nil, nil, id)
        }
    }
}
