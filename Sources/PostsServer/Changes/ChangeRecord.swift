import Postgres

/// One change a write records, in API.md's terms: its type, what the feed's filters look at
/// and the type's own fields. `ChangeLog.record` makes the one `INSERT INTO changes` every
/// write uses, as a statement or as a CTE of the write's own statement.
struct ChangeRecord: Sendable {
    enum Kind: String, Sendable {
        case postCreated = "post.created"
        case postUpdated = "post.updated"
        case postDeleted = "post.deleted"
        case likeChanged = "like.changed"
        case commentCreated = "comment.created"
        case commentDeleted = "comment.deleted"
        case commentLiked = "comment.liked"
        case profileUpdated = "profile.updated"
        case profileDeleted = "profile.deleted"
        case followChanged = "follow.changed"
    }

    let kind: Kind
    /// SQL expressions over `source`'s rows (or bound values).
    var postID: SQLQuery = "NULL::bigint"
    var parentID: SQLQuery = "NULL::bigint"
    /// A reparent's former parent; nil for every other write (`reparented` false).
    var oldParentID: SQLQuery?
    let userID: SQLQuery
    /// The type's own fields: `(key, json-able expression)`, in order.
    let data: [(String, SQLQuery)]
    /// A member left out of `data` when its expression is NULL (the parent's count of a
    /// root post's change).
    var omittedWhenNull: (String, SQLQuery)?
    /// `FROM …` (and `WHERE`, `ORDER BY`): where the expressions find their rows; empty for
    /// a change made of bound values alone.
    var source: SQLQuery = ""
}

extension ChangeLog {
    /// The INSERT that records `change`.
    static func record(_ change: ChangeRecord) -> SQLQuery {
        var data = payload(change.data)
        if let (key, value) = change.omittedWhenNull {
            data = "CASE WHEN (\(value)) IS NULL THEN \(data) ELSE \(payload(change.data + [(key, value)])) END"
        }
        let oldParent: SQLQuery = change.oldParentID ?? "NULL::bigint"
        let reparented: SQLQuery = change.oldParentID == nil ? "false" : "true"
        var insert: SQLQuery = """
            INSERT INTO changes (type, post_id, parent_id, old_parent_id, reparented, user_id, data)
            SELECT '\(unsafeSQL: change.kind.rawValue)', \(change.postID), \(change.parentID), \(oldParent), \(reparented), \
            \(change.userID), \(data)
            """
        if !change.source.sql.isEmpty { insert.append(" "); insert.append(change.source) }
        return insert
    }

    /// `json_build_object('key', value, …)`.
    private static func payload(_ members: [(String, SQLQuery)]) -> SQLQuery {
        var object: SQLQuery = "json_build_object("
        for (index, (key, value)) in members.enumerated() {
            object.append(index == 0 ? "'\(unsafeSQL: key)', " : ", '\(unsafeSQL: key)', ")
            object.append(value)
        }
        object.append(")")
        return object
    }
}
