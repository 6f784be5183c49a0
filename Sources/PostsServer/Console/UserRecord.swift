import Postgres

/// What the console's Users page shows of one user beyond `UserLookup`'s summary (API.md
/// "The console": sessions and the reports against them), for moderators and admins: the
/// user's live sessions as `GET /api/me/sessions` shows them to their owner (never the
/// token or its hash), and the reports on the user, their posts or their comments with
/// reason, details, reporter and state. Both newest first, in keyset pages.
struct UserRecord: Sendable {
    var pool: ConnectionPool
    /// What is live (`TOKEN_TTL`, revocation) and how a session is written: the owner's view.
    let sessions: Sessions

    /// The user's live sessions; `current` is true only for the token the moderator came
    /// with (when they read their own). 404 for no such user.
    func sessions(of userID: Int64, _ request: PageRequest<KeysetCursor>,
                  caller: Caller) throws -> (json: [UInt8], next: KeysetCursor?) {
        var query: SQLQuery = """
            SELECT \(unsafeSQL: Sessions.shape.selectList()), t.id = \(caller.tokenID) AS current
            FROM tokens t WHERE t.user_id = \(userID) AND \(sessions.live("t"))
            """
        if let cursor = request.cursor { query.append(cursor.before(created: "t.created_at", id: "t.id")) }
        query.append(" ORDER BY t.created_at DESC, t.id DESC LIMIT \(literal: request.limit + 1)")
        return try pool.withConnection { connection in
            try Self.requireUser(userID, on: connection)
            let rows = try connection.query(query).rows
            let shown = Array(rows.prefix(request.limit))
            let next = rows.count > request.limit ? try shown.last.map(Self.cursor) : nil
            return (try Sessions.array(shown), next)
        }
    }

    /// A report as the list shows it (`reporter`, `target` and `resolved_at` follow).
    static let reportShape = ResourceShape([
        ResourceField("id", "r.id", .integer),
        ResourceField("status", "r.status", .text),
        ResourceField("reason", "r.reason", .text),
        ResourceField("details", "r.details", .text),
        ResourceField("created_at", "r.created_at", .time),
        ResourceField("action", "r.action", .text),
    ])

    /// The reports against the user: on them, on their posts, on their comments (as
    /// `UserLookup` counts them), by the author the report kept (migration 0025): a report
    /// whose post or comment was removed since stays on the record.
    /// `{"id","status","reason","details","created_at","action","reporter":Profile|null,
    /// "target":{"type","id"},"resolved_at"}`. 404 for no such user.
    func reports(against userID: Int64, _ request: PageRequest<KeysetCursor>) throws -> (json: [UInt8], next: KeysetCursor?) {
        // The report's columns first (the shape reads them by position); `reported_at` for
        // the cursor, as the reporter's profile brings a `created_at` of its own.
        var query: SQLQuery = """
            SELECT \(unsafeSQL: Self.reportShape.selectList()), r.created_at AS reported_at, r.resolved_at, r.target_key,
                   pr.user_id IS NOT NULL AS has_reporter, \(unsafeSQL: ProfileShape.columns)
            FROM reports r LEFT JOIN profiles pr ON pr.user_id = r.reporter_id
            WHERE r.target_user_id = \(userID)
            """
        if let cursor = request.cursor { query.append(cursor.before(created: "r.created_at", id: "r.id")) }
        query.append(" ORDER BY r.created_at DESC, r.id DESC LIMIT \(literal: request.limit + 1)")
        return try pool.withConnection { connection in
            try Self.requireUser(userID, on: connection)
            let rows = try connection.query(query).rows
            let (json, last) = try RowJSON.page(rows, limit: request.limit) { row, out in
                try Self.reportShape.append(row, to: &out) { out in
                    out += #","reporter":"#.utf8
                    if try row.decode("has_reporter", as: Bool.self) {
                        try ProfileShape.append(row, from: try row.position(of: "user_id"), to: &out)
                    } else {
                        out += "null".utf8
                    }
                    out += #","target":"#.utf8
                    out += ModerationTarget.reference(try row.decode("target_key", as: String.self)).finished
                    out += #","resolved_at":"#.utf8
                    let resolved = try row.position(of: "resolved_at")
                    if try row.decode(at: resolved, as: PostgresTimestamp?.self) != nil {
                        try RowJSON.appendTimestamp(row, resolved, to: &out)
                    } else {
                        out += "null".utf8
                    }
                }
            }
            let next = try last.map { KeysetCursor(createdAt: try $0.decode("reported_at"), id: try $0.decode("id")) }
            return (json, next)
        }
    }

    /// 404 unless the user exists (the reserved `deleted` user is no one to moderate).
    private static func requireUser(_ userID: Int64, on connection: PostgresConnection) throws {
        guard try connection.query("""
            SELECT 1 AS found FROM users WHERE id = \(userID) AND email <> \(ReservedUser.email)
            """).first != nil else { throw APIError.notFound("no such user") }
    }

    private static func cursor(_ row: PostgresRow) throws -> KeysetCursor {
        KeysetCursor(createdAt: try row.decode("created_at"), id: try row.decode("id"))
    }
}
