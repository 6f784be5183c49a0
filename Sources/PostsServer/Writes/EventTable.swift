import Postgres

/// The domain events: what a write did, in the domain's terms (a post created, a like
/// given or taken back, a follow ended …). A write's statement says what it did by defining
/// the events as rows, a CTE of this name and these columns made from the rows it wrote (the
/// counters after it, the JSON of the row as its answer shows it), and `EventEffects`, the
/// one place that knows what follows from each kind, reads them in the same statement: one
/// round trip, as the write alone would cost. Every write does it this way, from a like to
/// an account's deletion and the demo seed.
///
/// `seq` orders a statement's events of a kind: their changes are recorded in that order.
enum EventTable: String, CaseIterable, Sendable {
    case postCreated = "post_created"
    case postUpdated = "post_updated"
    case postsDeleted = "posts_deleted"
    case likeChanged = "like_changed"
    case commentCreated = "comment_created"
    case commentDeleted = "comment_deleted"
    case commentLikeChanged = "comment_like_changed"
    case followChanged = "follow_changed"
    case relationsChanged = "relations_changed"
    case profileUpdated = "profile_updated"
    case profileDeleted = "profile_deleted"

    /// The CTE's columns, in order, with their SQL types.
    var columns: [(name: String, type: String)] {
        switch self {
        case .postCreated:
            // `json`: the post as API.md shows it; `mentioned`: the users its text names.
            [("seq", "bigint"), ("post", "bigint"), ("author", "bigint"), ("parent", "bigint"), ("parent_author", "bigint"),
             ("parent_child_count", "int"), ("created_at", "timestamptz"), ("json", "json"), ("mentioned", "bigint[]")]
        case .postUpdated:
            // `moved`: a reparent, from `old_parent` (NULL: it was a root).
            [("seq", "bigint"), ("post", "bigint"), ("parent", "bigint"), ("actor", "bigint"), ("json", "json"),
             ("moved", "boolean"), ("old_parent", "bigint"), ("mentions_added", "bigint[]"), ("mentions_removed", "bigint[]")]
        case .postsDeleted:
            [("seq", "bigint"), ("post", "bigint"), ("parent", "bigint"), ("parent_child_count", "int"), ("actor", "bigint"),
             ("deleted_ids", "bigint[]")]
        case .likeChanged:
            [("seq", "bigint"), ("post", "bigint"), ("parent", "bigint"), ("post_author", "bigint"), ("actor", "bigint"),
             ("liked", "boolean"), ("like_count", "int")]
        case .commentCreated:
            [("seq", "bigint"), ("comment", "uuid"), ("post", "bigint"), ("post_parent", "bigint"), ("post_author", "bigint"),
             ("reply_to", "uuid"), ("reply_to_author", "bigint"), ("actor", "bigint"), ("json", "json"), ("comment_count", "int"),
             ("mentioned", "bigint[]")]
        case .commentDeleted:
            [("seq", "bigint"), ("comment", "uuid"), ("post", "bigint"), ("post_parent", "bigint"), ("actor", "bigint"),
             ("comment_count", "int"), ("reply_to", "uuid")]
        case .commentLikeChanged:
            [("seq", "bigint"), ("comment", "uuid"), ("post", "bigint"), ("post_parent", "bigint"), ("comment_author", "bigint"),
             ("actor", "bigint"), ("liked", "boolean"), ("like_count", "int")]
        case .followChanged:
            // The counters after it: the followee's `followers_count`, the follower's
            // `following_count`. `by_account_deletion`: its feed rows and notifications go
            // with the deleted account (migrations 0013 and 0015's cascades).
            [("seq", "bigint"), ("follower", "bigint"), ("followee", "bigint"), ("following", "boolean"),
             ("followers_count", "int"), ("following_count", "int"), ("actor", "bigint"), ("by_account_deletion", "boolean")]
        case .relationsChanged:
            [("seq", "bigint"), ("user_id", "bigint")]
        case .profileUpdated:
            [("seq", "bigint"), ("user_id", "bigint"), ("json", "json")]
        case .profileDeleted:
            [("seq", "bigint"), ("user_id", "bigint")]
        }
    }

    /// The CTE as a statement's own query makes it: `<name> AS (SELECT <expr> AS <column>, …
    /// <source>)`, each expression cast to its column's type. Every column must be given.
    func cte(_ values: KeyValuePairs<String, SQLQuery>, _ source: SQLQuery) -> SQLQuery {
        let given = Dictionary(values.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        precondition(Set(given.keys) == Set(columns.map(\.name)), "\(rawValue): the columns are \(columns.map(\.name))")
        var query: SQLQuery = "\(unsafeSQL: rawValue) AS (SELECT "
        for (index, column) in columns.enumerated() {
            if index > 0 { query.append(", ") }
            query.append("(")
            query.append(given[column.name]!)
            query.append(")::\(unsafeSQL: column.type) AS \(unsafeSQL: column.name)")
        }
        query.append(" ")
        query.append(source)
        query.append(")")
        return query
    }
}
