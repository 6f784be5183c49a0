import Foundation
import Postgres

/// What a report or a log entry is about, as a moderator's app shows it.
enum ModerationTarget {
    /// `{"type","id"}` from a `target_key` (`post:12`).
    static func reference(_ key: String) -> JSONObject {
        var reference = JSONObject()
        let parts = key.split(separator: ":", maxSplits: 1).map(String.init)
        reference.add("type", parts.first)
        switch ReportService.Target(key: key) {
        case .post(let id)?, .user(let id)?: reference.add("id", id)
        default: reference.add("id", parts.count == 2 ? parts[1] : nil)
        }
        return reference
    }

    /// `{"type":"post","id","post":Post|null}` (and likewise `comment`, `user` with
    /// `profile`): the target as it is now, null once it is gone; its id stays, so that a
    /// moderator can still tell which one it was.
    static func object(_ key: String, on connection: PostgresConnection) throws -> JSONObject {
        var object = reference(key)
        switch ReportService.Target(key: key) {
        case .post(let id)?:
            try addRaw(&object, "post", connection.query("""
                SELECT \(unsafeSQL: PostShape.columns) FROM posts p \(unsafeSQL: PostShape.authorJoin) WHERE p.id = \(id)
                """).first) { row, out in try PostShape.append(row, withLiked: false, to: &out) }
        case .comment(let id)?:
            try addRaw(&object, "comment", connection.query("""
                SELECT \(unsafeSQL: CommentShape.columns) FROM comments c \(unsafeSQL: CommentShape.authorJoin) WHERE c.id = \(id)
                """).first) { row, out in try CommentShape.append(row, to: &out) }
        case .user(let id)?:
            try addRaw(&object, "profile", connection.query("""
                SELECT \(unsafeSQL: ProfileShape.columns) FROM profiles pr WHERE pr.user_id = \(id)
                """).first) { row, out in try ProfileShape.append(row, to: &out) }
        case nil:
            break
        }
        return object
    }

    private static func addRaw(_ object: inout JSONObject, _ key: String, _ row: PostgresRow?,
                               _ append: (PostgresRow, inout [UInt8]) throws -> Void) throws {
        guard let row else { return object.add(key, nil as String?) }
        var out: [UInt8] = []
        try append(row, &out)
        object.addRaw(key, out)
    }

    /// The author of a post or comment target, or the user itself: whom `suspend` suspends.
    static func author(of key: String, on connection: PostgresConnection) throws -> Int64? {
        switch ReportService.Target(key: key) {
        case .post(let id)?: try connection.query("SELECT user_id FROM posts WHERE id = \(id)").first?.decode("user_id")
        case .comment(let id)?: try connection.query("SELECT user_id FROM comments WHERE id = \(id)").first?.decode("user_id")
        case .user(let id)?: id
        case nil: nil
        }
    }
}
