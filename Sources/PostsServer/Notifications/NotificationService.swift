import Postgres

/// The caller's notifications (API.md "Notifications"): the list, newest first, with the
/// unread count, and marking them read. The rows are written by the acts' own statements
/// (`NotificationRules`, through `EventEffects`); here they are only read and marked.
///
/// What the caller must not see is left out as it is read (`Visibility`): notifications
/// from users it blocked, was blocked by or muted (a block made after the act too), and
/// from suspended users. The unread count leaves out the same ones, so a badge never
/// counts what the list does not show.
struct NotificationService: Sendable {
    var pool: ConnectionPool

    struct Page: Sendable {
        let json: [UInt8]
        let unreadCount: Int
        let nextCursor: KeysetCursor?
    }

    func page(for caller: Caller, _ request: PageRequest<KeysetCursor>) throws -> Page {
        var page: SQLQuery = """
            SELECT \(unsafeSQL: NotificationShape.columns)
            FROM notifications n JOIN profiles pr ON pr.user_id = n.actor_id
            WHERE n.recipient_id = \(caller.userID)\(Visibility.visible(on: .notifications, author: "n.actor_id", to: caller, suspendedFlag: "pr.suspended"))
            """
        if let cursor = request.cursor { page.append(cursor.before(created: "n.created_at", id: "n.id")) }
        page.append(" ORDER BY n.created_at DESC, n.id DESC LIMIT \(literal: request.limit + 1)")
        // The count and the page in one statement: one round trip, one snapshot.
        let query: SQLQuery = """
            SELECT l.*, u.unread FROM (\(Self.unreadCount(for: caller, excluding: nil))) u LEFT JOIN LATERAL (\(page)) l ON true
            ORDER BY l.created_at DESC, l.id DESC
            """
        return try pool.withReadConnection { connection in
            let rows = try connection.query(query).rows
            guard let first = rows.first else { throw PostgresError(.decoding, details: "the notifications page answered no row") }
            let unread = try first.decode("unread", as: Int.self)
            let listed = try rows.filter { try !$0.isNull("id") }
            let (json, last) = try RowJSON.page(listed, limit: request.limit) { row, out in
                try NotificationShape.append(row, to: &out)
            }
            return Page(json: json, unreadCount: unread, nextCursor: try last.map(NotificationShape.cursor(after:)))
        }
    }

    /// Marks the caller's notifications read, all of them or those up to `upTo` (an id, as
    /// the list shows it); answers the unread count after it. One statement.
    func markRead(for caller: Caller, upTo: Int64?) throws -> Int {
        var marked: SQLQuery = "UPDATE notifications SET read = true WHERE recipient_id = \(caller.userID) AND NOT read"
        if let upTo { marked.append(" AND id <= \(upTo)") }
        marked.append(" RETURNING id")
        // The outer count reads the statement's snapshot, from before the update: the rows
        // it marked are left out by id.
        let query: SQLQuery = "WITH marked AS (\(marked)) \(Self.unreadCount(for: caller, excluding: "marked"))"
        return try pool.withRetriedStatement { connection in
            try connection.query(query).firstRow().decode("unread", as: Int.self)
        }
    }

    /// `SELECT … AS unread`: the unread notifications the list would show (a walk of the
    /// unread rows' partial index), without the ids in the CTE `excluding`, if given.
    private static func unreadCount(for caller: Caller, excluding marked: String?) -> SQLQuery {
        var count: SQLQuery = """
            SELECT count(*) AS unread FROM notifications n
            WHERE n.recipient_id = \(caller.userID) AND NOT n.read\(Visibility.visible(on: .notifications, author: "n.actor_id", to: caller))
            """
        if let marked { count.append(" AND n.id NOT IN (SELECT id FROM \(unsafeSQL: marked))") }
        return count
    }
}
