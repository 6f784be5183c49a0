import Postgres

/// Every moderator action (API.md: nothing a moderator does is unrecorded), written in the
/// action's own transaction, and read newest first.
enum ModerationLog {
    static func record(_ action: String, target: String, report: Int64? = nil, note: String, by moderator: Caller,
                       at clock: ServerClock, on connection: PostgresConnection) throws {
        try connection.query("""
            INSERT INTO moderation_log (moderator_id, action, target_key, report_id, note, created_at)
            VALUES (\(moderator.userID), \(action), \(target), \(report), \(note), \(clock.now))
            """)
    }

    /// A page of entries, newest first: `{"id","action","moderator":Profile?,"target":{"type","id"},
    /// "report_id","note","created_at"}`.
    static func page(_ request: PageRequest<KeysetCursor>, pool: ConnectionPool) throws -> (json: [UInt8], next: KeysetCursor?) {
        var query: SQLQuery = """
            SELECT l.id, l.action, l.target_key, l.report_id, l.note, l.created_at AS logged_at, l.moderator_id, \(unsafeSQL: ProfileShape.columns)
            FROM moderation_log l LEFT JOIN profiles pr ON pr.user_id = l.moderator_id WHERE true
            """
        if let cursor = request.cursor { query.append(cursor.before(created: "l.created_at", id: "l.id")) }
        query.append(" ORDER BY l.created_at DESC, l.id DESC LIMIT \(literal: request.limit + 1)")
        return try pool.withConnection { connection in
            let rows = try connection.query(query).rows
            let (json, last) = try RowJSON.page(rows, limit: request.limit) { row, out in
                var entry = JSONObject()
                entry.add("id", try row.decode("id", as: Int64.self))
                entry.add("action", try row.decode("action", as: String.self))
                if try row.decode("moderator_id", as: Int64?.self) != nil {
                    var moderator: [UInt8] = []
                    try ProfileShape.append(row, from: try row.position(of: "user_id"), to: &moderator)
                    entry.addRaw("moderator", moderator)
                } else {
                    entry.add("moderator", nil as String?)
                }
                entry.add("target", ModerationTarget.reference(try row.decode("target_key", as: String.self)))
                entry.add("report_id", try row.decode("report_id", as: Int64?.self))
                entry.add("note", try row.decode("note", as: String.self))
                // `logged_at`: the moderator's profile brings a `created_at` of its own.
                entry.add("created_at", try row.decode("logged_at", as: PostgresTimestamp.self))
                out += entry.finished
            }
            let next = try last.map { KeysetCursor(createdAt: try $0.decode("logged_at"), id: try $0.decode("id")) }
            return (json, next)
        }
    }
}
