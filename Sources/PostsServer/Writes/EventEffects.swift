import Postgres

/// The one place a write's events become what follows from them, in the write's own
/// statement: the changes clients sync from (`ChangeRows`), the notifications to write and
/// take back (`NotificationRules`, filtered by `Visibility.notifiable`) with each new one's
/// private change and push job, and the home feeds (`FeedEffects`). A service states its
/// write (`Write`: locks, target, steps, events as CTEs of `EventTable`, answer) and `run`
/// makes it one statement: the write and all it causes cost one round trip.
///
/// Why in the write's statement rather than a second one built from events decoded in
/// Swift (how it was first built, d4515cc): that second statement, and the explicit
/// transaction it needs, cost more than the work. `bench/compare-builds.sh` with
/// `OWN_DATABASES=1`, 2 cores, pool 4, same run: like_toggle_mix 2,321 against 1,296 req/s,
/// comment_create 1,958 against 1,035. (With generic plans and the COMMIT sent with the
/// second statement, the two-statement build reached ~2,340 likes/s against this one's
/// ~2,570 in a run of their own: the planning of a statement of array parameters had cost
/// 0.7 ms of its 0.9.) Against the build before this issue (86868de, triggers), the same
/// script: like_toggle_mix 1.14x, comment_create 1.31x.
struct EventEffects: Sendable {
    let jobs: JobScheduler
    var feed = FeedEffects(fanOutLimit: Configuration.defaultFeedFanOutLimit)
    /// What every row a write makes is stamped with (`clock.now`): the services' own rows
    /// too, which reach it here.
    let clock: ServerClock
    /// `FEDERATION=on`: what local users do is sent to other servers (`FederationEffects`).
    var federates = false

    /// Whether a notification is pushed (a job per notification) by this instance.
    var pushes: Bool { jobs.runs(.push) }

    /// What follows from a statement's events: CTEs to end its `WITH` list, and whether one
    /// of them queues a job (then the job runner is woken at the commit).
    struct Effects {
        let ctes: SQLQuery
        let queuesJobs: Bool
    }

    /// The effects' CTEs (to follow the event CTEs in the statement's `WITH` list) for
    /// events of these tables; their changes are recorded in this order of the tables.
    /// `profilesCounted`: the CTE of the statement that updated profiles' counters
    /// (`RETURNING pr.*`): a notification's actor is shown with its counters after the
    /// write, as the notification list shows it (the statement's other parts see the rows
    /// as they were before it).
    func effects(of tables: [EventTable], profilesCounted: String? = nil) -> Effects {
        var parts: [SQLQuery] = tables.compactMap(NotificationRules.withdrawals)
        let notices = tables.compactMap(NotificationRules.notices)
        var queuesJobs = false
        if !notices.isEmpty {
            parts.append(Self.notifying(notices, at: clock.now))
            if pushes {
                parts.append(Self.pushing(at: clock.now))
                queuesJobs = true
            }
        }
        parts.append(Self.recording(tables.map(ChangeRows.select), withNotifications: !notices.isEmpty,
                                    profilesCounted: profilesCounted, at: clock.now))
        for table in tables {
            let feedParts = feed.ctes(table, at: clock.now)
            parts += feedParts.map(\.cte)
            queuesJobs = queuesJobs || feedParts.contains(where: \.queuesJobs)
            if federates {
                let federated = FederationEffects.ctes(table, at: clock.now)
                parts += federated
                queuesJobs = queuesJobs || !federated.isEmpty
            }
        }
        return Effects(ctes: Self.list(parts), queuesJobs: queuesJobs)
    }

    /// Runs `write` as one statement: its locks and target (`Write.head`), its steps and
    /// events, what follows from them, its answer. A job it queued wakes this instance's
    /// runner once it has committed. `committing`: the statement is its transaction's
    /// last, and goes out with the COMMIT (one round trip for both). `checking`: the
    /// preconditions of the requests a batch's statement writes for (`WriteBatches`), sent
    /// ahead of it with the one `connection` carries.
    @discardableResult
    func run(_ write: Write, on connection: PostgresConnection, committing: Bool = false,
             checking preconditions: [Precondition] = []) throws -> PostgresResult {
        // A write without events (none today) causes nothing: no effects are built for it.
        let effects = write.events.isEmpty ? nil : effects(of: write.events.map(\.table), profilesCounted: write.profilesCounted)
        let queuesJobs = write.queuesJobs || effects?.queuesJobs == true
        var ctes = write.head + write.steps + write.events.map(\.cte)
        if let effects { ctes.append(effects.ctes) }
        var statement: SQLQuery = ctes.isEmpty ? "" : "WITH RECURSIVE "
        statement.append(Self.list(ctes))
        statement.append(" ")
        statement.append(write.answer)
        if committing {
            if queuesJobs { connection.onCommit(jobs.wake) }
            return try connection.queryCommitting(statement)
        }
        let result = try connection.query(statement, checking: preconditions)
        // After the statement: at once outside a transaction, at its commit inside one.
        if queuesJobs { connection.onCommit(jobs.wake) }
        return result
    }

    /// The parts joined by `separator`: a `WITH` list, or a union.
    private static func list(_ parts: [SQLQuery], separator: SQLQuery = ", ") -> SQLQuery {
        var query: SQLQuery = ""
        for (index, part) in parts.enumerated() {
            if index > 0 { query.append(separator) }
            query.append(part)
        }
        return query
    }

    /// `notified`: one new notification per recipient and event (its first kind), to those
    /// who may be given it. (An event is its table and its `seq`.)
    private static func notifying(_ notices: [SQLQuery], at now: SQLQuery) -> SQLQuery {
        let union = list(notices, separator: " UNION ALL ")
        return """
            notified AS (
                INSERT INTO notifications (recipient_id, actor_id, type, post_id, comment_id, created_at)
                SELECT DISTINCT ON (i.source, i.seq, i.recipient) i.recipient, i.actor, i.type, i.post, i.comment, \(now)
                FROM (\(union)) i
                WHERE i.recipient <> i.actor AND \(Visibility.notifiable(recipient: "i.recipient", actor: "i.actor"))
                  AND (NOT i.only_if_none OR NOT EXISTS (
                      SELECT 1 FROM notifications x WHERE x.post_id = i.post AND x.recipient_id = i.recipient))
                ORDER BY i.source, i.seq, i.recipient, i.priority
                RETURNING *
            )
            """
    }

    /// `pushed`: one delivery job per new notification, its delivery id fixed now.
    private static func pushing(at now: SQLQuery) -> SQLQuery {
        """
        pushed AS (
            INSERT INTO jobs (kind, payload, run_at, created_at)
            SELECT \(JobKind.push.name), \(JobPayload.push(notification: "id")), \(now), \(now)
            FROM notified ORDER BY id
        )
        """
    }

    /// `recorded`: the events' changes in their order, then each new notification's private
    /// change (the notification as the list shows it, for its recipient's streams).
    private static func recording(_ changes: [SQLQuery], withNotifications: Bool, profilesCounted: String?,
                                  at now: SQLQuery) -> SQLQuery {
        var rows: SQLQuery = ""
        // In the order the tables were given, each in its events' order.
        for (index, change) in changes.enumerated() {
            if index > 0 { rows.append(" UNION ALL ") }
            rows.append("SELECT \(literal: index) AS part, c.* FROM (")
            rows.append(change)
            rows.append(") c")
        }
        if withNotifications {
            // The actor's row: as the statement left it, else as it was (two index probes; a
            // union joined on the outside read every profile).
            let actor = profilesCounted.map { counted in """
                JOIN LATERAL (
                    SELECT * FROM \(counted) c WHERE c.user_id = n.actor_id
                    UNION ALL SELECT * FROM profiles p
                    WHERE p.user_id = n.actor_id AND NOT EXISTS (SELECT 1 FROM \(counted) c WHERE c.user_id = n.actor_id)
                ) pr ON true
                """ } ?? "JOIN profiles pr ON pr.user_id = n.actor_id"
            rows.append("""
                 UNION ALL
                SELECT \(literal: changes.count), n.id, 'notification', NULL, NULL, NULL, false, n.actor_id, n.recipient_id,
                       \(unsafeSQL: NotificationShape.json)
                FROM notified n \(unsafeSQL: actor)
                """)
        }
        return """
            recorded AS (
                INSERT INTO changes (type, post_id, parent_id, old_parent_id, reparented, user_id, recipient_id, data, at)
                SELECT r.type, r.post_id, r.parent_id, r.old_parent_id, r.reparented, r.user_id, r.recipient_id, r.data, \(now)
                FROM (\(rows)) r ORDER BY r.part, r.seq
            )
            """
    }
}
