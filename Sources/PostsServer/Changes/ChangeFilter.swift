import HTTP
import Postgres

/// The filters of `/api/changes` and `/api/events`, combinable: `post_id=X` (the post, its
/// direct children, and the likes and comments of both), `parent_id=X` (its direct
/// children, one reparented away included), `parent_id=root` (root posts, a root moved
/// under another post included), `user_id=X` (changes made by that user). The same rules
/// in SQL (for pages and replays) and in memory (for live fan-out).
struct ChangeFilter: Sendable, Equatable {
    enum Parent: Sendable, Equatable {
        case post(Int64)
        case root
    }

    var postID: Int64?
    var parent: Parent?
    var userID: Int64?

    /// 400 for a value that is not an id (or `root`).
    init(_ query: QueryParameters) throws(HTTPError) {
        postID = try query["post_id"].map { text throws(HTTPError) in try Self.id(text, "post_id") }
        parent = try query["parent_id"].map { text throws(HTTPError) in
            text == "root" ? .root : .post(try Self.id(text, "parent_id"))
        }
        userID = try query["user_id"].map { text throws(HTTPError) in try Self.id(text, "user_id") }
    }

    init() {}

    func matches(_ change: Change) -> Bool {
        if let postID, change.postID != postID && change.parentID != postID { return false }
        switch parent {
        case .post(let id)?:
            if change.parentID != id && !(change.reparented && change.oldParentID == id) { return false }
        case .root?:
            let isRoot = change.postID != nil && change.parentID == nil
            if !isRoot && !(change.reparented && change.oldParentID == nil) { return false }
        case nil:
            break
        }
        if let userID, change.userID != userID { return false }
        return true
    }

    /// The same rules as `AND` conditions on the changes alias `c`.
    var sql: SQLQuery {
        var query: SQLQuery = ""
        if let postID { query.append(" AND (c.post_id = \(postID) OR c.parent_id = \(postID))") }
        switch parent {
        case .post(let id)?:
            query.append(" AND (c.parent_id = \(id) OR (c.reparented AND c.old_parent_id = \(id)))")
        case .root?:
            query.append(" AND ((c.post_id IS NOT NULL AND c.parent_id IS NULL) OR (c.reparented AND c.old_parent_id IS NULL))")
        case nil:
            break
        }
        if let userID { query.append(" AND c.user_id = \(userID)") }
        return query
    }

    private static func id(_ text: String, _ name: String) throws(HTTPError) -> Int64 {
        guard let id = Int64(pathParameter: text) else { throw .badRequest("\(name) must be an id") }
        return id
    }
}
