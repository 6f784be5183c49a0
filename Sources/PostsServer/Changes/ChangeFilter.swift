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

    /// Whose changes: the public ones (`/api/changes`, `/api/events`), one user's private
    /// notifications (`/api/notifications/events`), or both (the live feed's one read, which
    /// its subscribers' filters then sort).
    enum Audience: Sendable, Equatable {
        case everyone
        case recipient(Int64)
        case all
    }

    var audience = Audience.everyone
    var postID: Int64?
    var parent: Parent?
    var userID: Int64?
    /// Whose blocks and mutes apply (the caller), and on which surface of the visibility
    /// policy: `/api/changes`, `/api/events` or the notification stream.
    private(set) var viewer: Int64?
    private(set) var surface = Visibility.Surface.changes
    /// Changes made by these users are skipped (API.md "Safety": the viewer's blocks both
    /// ways and its mutes; a filtered stream simply skips them). Set from the viewer's
    /// sets, not the query; a live stream's are set again when the sets change
    /// (`ChangeFeed`, on the viewer's `relations.changed`).
    private(set) var hiddenUsers: [Int64] = []

    /// 400 for a value that is not an id (or `root`).
    init(_ query: QueryParameters) throws(APIError) {
        postID = try query["post_id"].map { text throws(APIError) in try Self.id(text, "post_id") }
        parent = try query["parent_id"].map { text throws(APIError) in
            text == "root" ? .root : .post(try Self.id(text, "parent_id"))
        }
        userID = try query["user_id"].map { text throws(APIError) in try Self.id(text, "user_id") }
    }

    init() {}

    /// Everything, public and private: what the live feed reads once for all its streams.
    static let everything: ChangeFilter = {
        var filter = ChangeFilter()
        filter.audience = .all
        return filter
    }()

    /// `caller`'s notifications, without those the visibility policy hides from it.
    static func notifications(for caller: Caller) -> ChangeFilter {
        var filter = ChangeFilter().hiding(for: caller, on: .notificationStream)
        filter.audience = .recipient(caller.userID)
        return filter
    }

    /// The same filter, skipping what `caller` must not see on `surface`.
    func hiding(for caller: Caller?, on surface: Visibility.Surface) -> ChangeFilter {
        var filter = self
        filter.surface = surface
        filter.viewer = caller?.userID
        if let caller { filter.seeing(caller.relations) }
        return filter
    }

    /// The viewer's sets as they are now.
    mutating func seeing(_ relations: Relations) {
        hiddenUsers = Visibility.hiddenUsers(on: surface, relations)
    }

    func matches(_ change: Change) -> Bool {
        switch audience {
        case .everyone: if change.recipientID != nil { return false }
        case .recipient(let id): if change.recipientID != id || change.type != "notification" { return false }
        case .all: break
        }
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
        if !hiddenUsers.isEmpty && hiddenUsers.contains(change.userID) { return false }
        return true
    }

    /// The same rules in SQL, as disjoint branches: `AND` conditions on the changes alias
    /// `c`, each of which one index walks in key order (see `ChangeReader.page`). A change
    /// matches the filter exactly when it matches one branch, and never two, so the union
    /// of the branches needs no de-duplication. (An `OR` across columns in one condition
    /// leaves PostgreSQL no index in key order: it reads every match and sorts them.)
    ///
    /// The narrowest criterion drives — a post, a parent, a user, then roots — split into
    /// its indexed alternatives; the others are checked on the rows it finds. No filter is
    /// one branch without a condition (the primary key).
    var branches: [SQLQuery] {
        var criteria: [[SQLQuery]] = []
        // Only notifications reach a recipient's stream (other private changes are for the
        // live feed's own bookkeeping: `relations.changed`); the partial index says so too.
        if case .recipient(let id) = audience { criteria.append(["c.recipient_id = \(id) AND c.type = 'notification'"]) }
        if let postID {
            criteria.append(["c.post_id = \(postID)", "c.parent_id = \(postID) AND c.post_id IS DISTINCT FROM \(postID)"])
        }
        if case .post(let id)? = parent {
            criteria.append(["c.parent_id = \(id)",
                             "c.reparented AND c.old_parent_id = \(id) AND c.parent_id IS DISTINCT FROM \(id)"])
        }
        if let userID { criteria.append(["c.user_id = \(userID)"]) }
        if case .root? = parent {
            // Partial indexes (0005): a btree walked for `IS NULL` does not give key order.
            criteria.append(["c.parent_id IS NULL AND c.post_id IS NOT NULL",
                             "c.reparented AND c.old_parent_id IS NULL AND NOT (c.parent_id IS NULL AND c.post_id IS NOT NULL)"])
        }
        // A suspended user's changes are left out for everyone, as its content is from every
        // read (API.md "Safety"): a probe per change into the partial index of suspended
        // users (0012). The live feed reads through here too, so no stream sees them.
        var checked: SQLQuery = Visibility.notSuspended("c.user_id")
        if audience == .everyone { checked.append(" AND c.recipient_id IS NULL") }
        if !hiddenUsers.isEmpty { checked.append(" AND c.user_id <> ALL(\(PostgresArray(hiddenUsers)))") }
        guard let driving = criteria.first else { return [checked] }
        for alternatives in criteria.dropFirst() { checked.append(Self.anyOf(alternatives)) }
        return driving.map { branch in
            var query: SQLQuery = " AND (\(branch))"
            query.append(checked)
            return query
        }
    }

    /// ` AND (a OR b …)`: a criterion checked on rows another index found.
    private static func anyOf(_ alternatives: [SQLQuery]) -> SQLQuery {
        var query: SQLQuery = " AND ("
        for (index, alternative) in alternatives.enumerated() {
            if index > 0 { query.append(" OR ") }
            query.append("(\(alternative))")
        }
        query.append(")")
        return query
    }

    private static func id(_ text: String, _ name: String) throws(APIError) -> Int64 {
        guard let id = Int64(pathParameter: text) else { throw .malformed("\(name) must be an id") }
        return id
    }
}
