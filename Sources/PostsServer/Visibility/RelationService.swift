import Postgres

/// Blocks and mutes (API.md "Safety"): idempotent writes of one row, and the caller's
/// lists of them, newest first. What they hide is `Visibility`'s; a write that changed a
/// set says so (`relations_changed`), so that the streams already open see it too.
struct RelationService: Sendable {
    var pool: ConnectionPool
    let effects: EventEffects

    enum Kind: Sendable {
        case block, mute

        var table: String { self == .block ? "blocks" : "mutes" }
        var actor: String { self == .block ? "blocker_id" : "muter_id" }
        var target: String { self == .block ? "blocked_id" : "muted_id" }
        /// The member of the answer that says the state (`"blocked"`, `"muted"`).
        var state: String { self == .block ? "blocked" : "muted" }
    }

    /// Adds (`on`) or removes the caller's block or mute of a user: 422 for oneself, 404
    /// for no such user. Removing one that does not exist changes nothing.
    func set(_ kind: Kind, on: Bool, user target: Int64, by caller: Caller) throws {
        guard target != caller.userID else { throw APIError.invalid("you cannot \(kind == .block ? "block" : "mute") yourself") }
        let write: SQLQuery = on
            ? "INSERT INTO \(unsafeSQL: kind.table) (\(unsafeSQL: kind.actor), \(unsafeSQL: kind.target), created_at) SELECT \(caller.userID), id, \(effects.clock.now) FROM target ON CONFLICT DO NOTHING RETURNING 1"
            : "DELETE FROM \(unsafeSQL: kind.table) WHERE \(unsafeSQL: kind.actor) = \(caller.userID) AND \(unsafeSQL: kind.target) = \(target) RETURNING 1"
        // Whose sets change moves their version on (a block: both users'; a mute: the
        // muter's), in the same statement, so every instance reads the sets again.
        let concerned: [Int64] = kind == .block ? [caller.userID, target] : [caller.userID]
        // A block also removes the follows between the two, both ways.
        let blocking = kind == .block && on
        var steps: [SQLQuery] = [
            "written AS (\(write))",
            """
            moved AS (
                UPDATE users SET relations_version = nextval('relations_versions')
                WHERE id = ANY(\(PostgresArray(concerned))) AND EXISTS (SELECT 1 FROM written) RETURNING id
            )
            """,
        ]
        var events: [(table: EventTable, cte: SQLQuery)] = []
        if blocking {
            steps.append(FollowEdges.removal(where: """
                (f.follower_id = \(caller.userID) AND f.followee_id = \(target))
                OR (f.follower_id = \(target) AND f.followee_id = \(caller.userID))
                """))
            events.append((.followChanged, FollowEdges.events("gone", following: false, actor: "\(caller.userID)")))
        }
        events.append((.relationsChanged, EventTable.relationsChanged.cte(["seq": "row_number() OVER (ORDER BY id)", "user_id": "id"],
                                                                          "FROM moved")))
        // A block of a remote account, or its end, is sent to its server (API.md "Federation").
        let federated = kind == .block && effects.federates
        if federated { steps.append(FederationEffects.blocking(on, actor: caller.userID, target: target, after: "written", at: effects.clock.now)) }
        // A block removes follows: both users' follows hold still (their locks, first).
        let statement = Write(locking: blocking ? .held : .none, target: Write.Target(statement: "SELECT id FROM users WHERE id = \(target)"),
                              steps: steps, events: events, answer: "SELECT (SELECT count(*) FROM target) AS found",
                              queuesJobs: federated)
        let found = try pool.withTransaction { connection in
            if blocking { try Write.take(.profiles(concerned), on: connection) }
            return try effects.run(statement, on: connection, committing: true).firstRow().decode("found", as: Int.self)
        }
        guard found == 1 else { throw APIError.notFound("no such user") }
    }

    struct Listed: Sendable {
        let profilesJSON: [UInt8]
        let nextCursor: KeysetCursor?
    }

    /// The profiles of the users the caller blocked (or muted), newest first.
    func list(_ kind: Kind, of caller: Caller, _ request: PageRequest<KeysetCursor>) throws -> Listed {
        var query: SQLQuery = """
            SELECT r.created_at AS listed_at, r.\(unsafeSQL: kind.target) AS listed_id, \(unsafeSQL: ProfileShape.columns)
            FROM \(unsafeSQL: kind.table) r JOIN profiles pr ON pr.user_id = r.\(unsafeSQL: kind.target)
            WHERE r.\(unsafeSQL: kind.actor) = \(caller.userID)
            """
        if let cursor = request.cursor { query.append(cursor.before(created: "r.created_at", id: "r.\(kind.target)")) }
        query.append(" ORDER BY r.created_at DESC, r.\(unsafeSQL: kind.target) DESC LIMIT \(literal: request.limit + 1)")
        return try pool.withReadConnection { connection in
            let rows = try connection.query(query).rows
            let (json, last) = try RowJSON.page(rows, limit: request.limit) { row, out in
                try ProfileShape.append(row, from: try row.position(of: "user_id"), to: &out)
            }
            let next = try last.map { KeysetCursor(createdAt: try $0.decode("listed_at"), id: try $0.decode("listed_id")) }
            return Listed(profilesJSON: json, nextCursor: next)
        }
    }
}
