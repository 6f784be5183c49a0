import Postgres

/// The moderators' side (API.md "Safety"): the report queue, resolving reports, suspending
/// users. Every action, what follows from it (`EventEffects`) and its log entry are one
/// transaction; images of what was removed are queued for deletion in it.
struct ModerationService: Sendable {
    var pool: ConnectionPool
    let posts: PostService
    let comments: CommentService
    /// When a report is resolved and a user suspended.
    let clock: ServerClock

    /// 403 unless the caller is a moderator or an admin (roles are the operator's to grant).
    func requireModerator(_ caller: Caller) throws {
        let role = try pool.withConnection { connection in
            try connection.query("SELECT role FROM users WHERE id = \(caller.userID)").first?.decode("role", as: String.self)
        }
        guard role == "moderator" || role == "admin" else { throw APIError.forbidden("moderators only") }
    }

    /// 403 unless the caller is an admin (domain blocks are theirs).
    func requireAdmin(_ caller: Caller) throws {
        let role = try pool.withConnection { connection in
            try connection.query("SELECT role FROM users WHERE id = \(caller.userID)").first?.decode("role", as: String.self)
        }
        guard role == "admin" else { throw APIError.forbidden("admins only") }
    }

    /// Reports by status, oldest first, each with its reporter, its target as it is now and
    /// how many reports on that target are open.
    func queue(status: String, _ request: PageRequest<KeysetCursor>) throws -> (json: [UInt8], next: String?) {
        guard status == "open" || status == "resolved" else { throw APIError.malformed("status must be open or resolved") }
        var query: SQLQuery = """
            SELECT r.id, r.status, r.reason, r.details, r.created_at AS reported_at, r.target_key,
                   (SELECT count(*) FROM reports o WHERE o.target_key = r.target_key AND o.status = 'open') AS on_target,
                   \(unsafeSQL: ProfileShape.columns)
            FROM reports r JOIN profiles pr ON pr.user_id = r.reporter_id WHERE r.status = \(status)
            """
        if let cursor = request.cursor { query.append(" AND (r.created_at, r.id) > (\(cursor.createdAt), \(cursor.id))") }
        query.append(" ORDER BY r.created_at, r.id LIMIT \(literal: request.limit + 1)")
        return try pool.withConnection { connection in
            let rows = try connection.query(query).rows
            let (json, last) = try RowJSON.page(rows, limit: request.limit) { row, out in
                var report = JSONObject()
                report.add("id", try row.decode("id", as: Int64.self))
                report.add("status", try row.decode("status", as: String.self))
                report.add("reason", try row.decode("reason", as: String.self))
                report.add("details", try row.decode("details", as: String.self))
                // `reported_at`: the reporter's profile brings a `created_at` of its own.
                report.add("created_at", try row.decode("reported_at", as: PostgresTimestamp.self))
                var reporter: [UInt8] = []
                try ProfileShape.append(row, from: try row.position(of: "user_id"), to: &reporter)
                report.addRaw("reporter", reporter)
                report.add("target", try ModerationTarget.object(row.decode("target_key", as: String.self), on: connection))
                report.add("reports_on_target", try row.decode("on_target", as: Int64.self))
                out += report.finished
            }
            let next = try last.map { KeysetCursor(createdAt: try $0.decode("reported_at"), id: try $0.decode("id")).text }
            return (json, next)
        }
    }

    enum Action: String, Sendable {
        case dismiss, remove, suspend
    }

    /// Resolves the report, and with it every open report on the same target: 404 for no
    /// such report, 409 for one already resolved, 422 for `remove` on a user.
    func resolve(_ reportID: Int64, _ action: Action, note: String, by moderator: Caller) throws {
        try pool.withTransaction { connection in
            // Read without a lock: the action's own locks come before the transaction's first
            // write (see WriteLocks), and locking the report is one. It is locked, and found
            // still open, after the action; resolved meanwhile, the action is rolled back.
            guard let report = try connection.query("SELECT target_key, status FROM reports WHERE id = \(reportID)").first else {
                throw APIError.notFound("no such report")
            }
            guard try report.decode("status", as: String.self) == "open" else { throw APIError.conflict("the report is resolved already") }
            let key: String = try report.decode("target_key")
            switch (action, ReportService.Target(key: key)) {
            case (.dismiss, _):
                break
            case (.remove, .post(let id)?):
                try removePost(id, by: moderator, on: connection)
            case (.remove, .comment(let id)?):
                try comments.remove(id, by: moderator, on: connection)
            case (.remove, _):
                throw APIError.invalid("remove applies to a post or a comment; suspend the user instead")
            case (.suspend, _):
                guard let author = try ModerationTarget.author(of: key, on: connection),
                      try Suspension.set(true, user: author, at: clock, on: connection) else { throw APIError.notFound("the reported content is gone") }
            }
            let stillOpen = try connection.query("""
                SELECT status = 'open' AS open FROM reports WHERE id = \(reportID) FOR UPDATE
                """).firstRow().decode("open", as: Bool.self)
            guard stillOpen else { throw APIError.conflict("the report is resolved already") }
            try connection.query("""
                UPDATE reports SET status = 'resolved', resolved_at = \(clock.now), resolved_by = \(moderator.userID), action = \(action.rawValue)
                WHERE target_key = \(key) AND status = 'open'
                """)
            try ModerationLog.record(action.rawValue, target: key, report: reportID, note: note, by: moderator, at: clock, on: connection)
        }
    }

    /// `POST /api/moderation/users/<id>/suspend` and `…/unsuspend`: 404 for no such user.
    func setSuspended(_ suspended: Bool, user userID: Int64, note: String, by moderator: Caller) throws {
        try pool.withTransaction { connection in
            guard try Suspension.set(suspended, user: userID, at: clock, on: connection) else { throw APIError.notFound("no such user") }
            try ModerationLog.record(suspended ? "suspend" : "unsuspend", target: ReportService.Target.user(userID).key,
                                     note: note, by: moderator, at: clock, on: connection)
        }
    }

    /// A post goes as its author's own delete would, except that others' replies below it
    /// stay (API.md: the tombstone rule of account deletion): then it becomes a tombstone.
    private func removePost(_ id: Int64, by moderator: Caller, on connection: PostgresConnection) throws {
        // The subtree holds still before it is asked whose posts it holds: a reply another
        // user adds meanwhile would otherwise be deleted with it (see `TreeLocks`). Read
        // under the locks: a delete of an ancestor may have won the race (404).
        try TreeLocks.lock(on: connection) {
            var covered = try TreeLocks.subtree(of: id, on: connection)
            if let parent = try PostService.parent(of: id, on: connection) { covered.insert(parent) }
            return covered
        }
        _ = try posts.existing(id, on: connection)
        let others = try connection.query("""
            WITH RECURSIVE subtree(id) AS (
                SELECT id FROM posts WHERE parent_id = \(id)
                UNION ALL
                SELECT child.id FROM posts child JOIN subtree ON child.parent_id = subtree.id
            )
            SELECT EXISTS (
                SELECT 1 FROM subtree s JOIN posts p ON p.id = s.id WHERE p.user_id <> (SELECT user_id FROM posts WHERE id = \(id))
            ) AS others
            """).firstRow().decode("others", as: Bool.self)
        guard others else { return try posts.deleteSubtree(id, by: moderator, checkingOwner: false, on: connection) }
        try posts.images.drop(try AccountDeletion.bury([id], by: moderator.userID, effects: posts.effects, on: connection),
                              on: connection)
    }
}
