import Foundation
import Postgres

/// The one place a write's events become what follows from them, in the write's own
/// transaction and in one statement (one round trip, whatever the events): the changes
/// clients sync from (`ChangeRows`), the notifications to write and take back
/// (`NotificationRules`, filtered by `Visibility.notifiable`) with each new one's private
/// change and push job, and the home feeds (`FeedEffects`). The statement's text depends
/// only on which of these parts the events need, so it is prepared once per shape.
struct EventEffects: Sendable {
    let jobs: JobScheduler

    /// Runs the effects of `events` on the write's connection (inside its transaction).
    func apply(_ events: [DomainEvent], on connection: PostgresConnection) throws {
        guard let (query, pushes) = statement(for: events) else { return }
        try connection.query(query)
        if pushes { connection.onCommit(jobs.wake) }
    }

    /// The statement, and whether it may queue push jobs (to wake the runner after the
    /// commit); nil when the events need nothing.
    func statement(for events: [DomainEvent]) -> (query: SQLQuery, pushes: Bool)? {
        let changes = events.flatMap(ChangeRows.rows(for:))
        let notices = events.flatMap(NotificationRules.notices(for:))
        let withdrawals = events.flatMap(NotificationRules.withdrawals(for:))
        let feed = FeedEffects(events)
        var parts: [SQLQuery] = []
        if !withdrawals.isEmpty { parts.append(Self.withdrawing(withdrawals)) }
        let pushes = !notices.isEmpty && jobs.runs(.push)
        if !notices.isEmpty {
            parts.append(Self.notifying(notices))
            if pushes { parts.append(Self.pushing) }
        }
        if !changes.isEmpty || !notices.isEmpty { parts.append(Self.recording(changes, withNotifications: !notices.isEmpty)) }
        parts += feed.parts
        guard !parts.isEmpty else { return nil }
        var query: SQLQuery = "WITH "
        for (index, part) in parts.enumerated() {
            if index > 0 { query.append(", ") }
            query.append(part)
        }
        query.append(" SELECT 1")
        return (query, pushes)
    }

    /// `withdrawn`: the notifications the withdrawals name.
    private static func withdrawing(_ withdrawals: [Withdrawal]) -> SQLQuery {
        // Arrays carry no NULL: 0 and '' stand for "any".
        """
        withdrawn AS (
            DELETE FROM notifications n
            USING unnest(\(PostgresArray(withdrawals.map(\.actor))), \(PostgresArray(withdrawals.map(\.kind.rawValue))),
                         \(PostgresArray(withdrawals.map { $0.recipient ?? 0 })), \(PostgresArray(withdrawals.map { $0.post ?? 0 })),
                         \(PostgresArray(withdrawals.map { $0.comment?.lowercasedText ?? "" }))) AS w(actor, type, recipient, post, comment)
            WHERE n.actor_id = w.actor AND n.type = w.type AND (w.recipient = 0 OR n.recipient_id = w.recipient)
              AND (w.post = 0 OR n.post_id = w.post) AND (w.comment = '' OR n.comment_id = w.comment::uuid)
        )
        """
    }

    private typealias Withdrawal = NotificationRules.Withdrawal

    /// `notified`: the new notifications the recipients may be given.
    private static func notifying(_ notices: [NotificationRules.Notice]) -> SQLQuery {
        """
        notified AS (
            INSERT INTO notifications (recipient_id, actor_id, type, post_id, comment_id)
            SELECT i.recipient, i.actor, i.type, nullif(i.post, 0), nullif(i.comment, '')::uuid
            FROM unnest(\(PostgresArray(notices.map(\.recipient))), \(PostgresArray(notices.map(\.actor))),
                        \(PostgresArray(notices.map(\.kind.rawValue))), \(PostgresArray(notices.map { $0.post ?? 0 })),
                        \(PostgresArray(notices.map { $0.comment?.lowercasedText ?? "" })),
                        \(PostgresArray(notices.map { $0.onlyIfNone ? "only" : "" })))
                WITH ORDINALITY AS i(recipient, actor, type, post, comment, only_if_none, k)
            WHERE \(Visibility.notifiable(recipient: "i.recipient", actor: "i.actor"))
              AND (i.only_if_none = '' OR NOT EXISTS (
                  SELECT 1 FROM notifications x WHERE x.post_id = nullif(i.post, 0) AND x.recipient_id = i.recipient))
            ORDER BY i.k
            RETURNING *
        )
        """
    }

    /// `pushed`: one delivery job per new notification, its delivery id fixed now.
    private static let pushing: SQLQuery = """
        pushed AS (
            INSERT INTO jobs (kind, payload)
            SELECT \(JobKind.push.name), json_build_object('notification_id', id, 'delivery_id', gen_random_uuid())
            FROM notified ORDER BY id
        )
        """

    /// `recorded`: the events' changes in their order, then each new notification's private
    /// change (the notification as the list shows it, for its recipient's streams).
    private static func recording(_ changes: [ChangeRow], withNotifications: Bool) -> SQLQuery {
        var rows: SQLQuery = """
            SELECT c.type, nullif(c.post_id, 0) AS post_id, nullif(c.parent_id, 0) AS parent_id,
                   nullif(c.old_parent_id, 0) AS old_parent_id, c.reparented = 'y' AS reparented, c.user_id,
                   nullif(c.recipient_id, 0) AS recipient_id, c.data::json AS data, 0 AS part, c.k AS k
            FROM unnest(\(PostgresArray(changes.map(\.kind.rawValue))), \(PostgresArray(changes.map { $0.postID ?? 0 })),
                        \(PostgresArray(changes.map { $0.parentID ?? 0 })), \(PostgresArray(changes.map { $0.oldParentID ?? 0 })),
                        \(PostgresArray(changes.map { $0.reparented ? "y" : "" })), \(PostgresArray(changes.map(\.userID))),
                        \(PostgresArray(changes.map { $0.recipientID ?? 0 })),
                        \(PostgresArray(changes.map { String(decoding: $0.data, as: UTF8.self) })))
                WITH ORDINALITY AS c(type, post_id, parent_id, old_parent_id, reparented, user_id, recipient_id, data, k)
            """
        if withNotifications {
            rows.append("""
                 UNION ALL
                SELECT 'notification', NULL, NULL, NULL, false, n.actor_id, n.recipient_id, \(unsafeSQL: NotificationShape.json),
                       1, n.id
                FROM notified n JOIN profiles pr ON pr.user_id = n.actor_id
                """)
        }
        return """
            recorded AS (
                INSERT INTO changes (type, post_id, parent_id, old_parent_id, reparented, user_id, recipient_id, data)
                SELECT type, post_id, parent_id, old_parent_id, reparented, user_id, recipient_id, data
                FROM (\(rows)) r ORDER BY part, k
            )
            """
    }
}
