import Postgres

/// The push sender's statements over `push_outbox`, each its own short transaction: a
/// claim commits before anything is posted, so no connection or row lock is held while
/// the receiver is slow.
struct PushQueue: Sendable {
    let pool: ConnectionPool

    /// API.md: a push is retried until it is this old, then failed.
    static let deliveryWindowSeconds = 60 * 60
    /// How long a claimed row is left to its sender: a claim's batch (`PushSender.batch`)
    /// times a request's 10 s limit, with room to spare; only a sender that died gives rows
    /// up before, and then another instance takes them.
    static let leaseSeconds = 120
    /// Failed rows are kept this long for the operator to look at (`last_error`), then go.
    static let failedRetentionSeconds = 7 * 24 * 60 * 60

    struct Claimed: Sendable {
        let id: Int64
        /// `X-Posts-Delivery`: the same on every try.
        let deliveryID: String
        /// Tries so far, this one included.
        let attempts: Int
        let payload: PushPayload
    }

    /// Up to `limit` due pushes, oldest due first, each marked as being tried (one more
    /// attempt, a lease), with everything its body needs: the notification, its actor's
    /// names and the recipient's tokens as they are now (a token removed meanwhile is never
    /// posted). Rows another instance has locked are skipped, never waited for: N senders
    /// never take the same row. One statement, so one round trip and atomic by itself.
    func claim(limit: Int) throws -> [Claimed] {
        let rows = try pool.withConnection { connection in
            try connection.query("""
                WITH due AS (
                    SELECT id FROM push_outbox
                    WHERE failed_at IS NULL AND next_attempt_at <= now()
                    ORDER BY next_attempt_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED
                ), claimed AS (
                    UPDATE push_outbox o SET attempts = o.attempts + 1,
                        next_attempt_at = now() + make_interval(secs => \(Self.leaseSeconds))
                    FROM due WHERE o.id = due.id
                    RETURNING o.id, o.notification_id, o.delivery_id, o.attempts
                )
                SELECT c.id, c.delivery_id::text AS delivery_id, c.attempts, n.id AS notification_id, n.type,
                       n.recipient_id, n.actor_id, n.post_id, n.comment_id::text AS comment_id,
                       coalesce(pr.username, '') AS username, coalesce(pr.full_name, '') AS full_name,
                       t.platform, t.token, t.device_id
                FROM claimed c
                JOIN notifications n ON n.id = c.notification_id
                LEFT JOIN profiles pr ON pr.user_id = n.actor_id
                LEFT JOIN push_tokens t ON t.user_id = n.recipient_id
                ORDER BY c.id, t.created_at, t.platform, t.token
                """).rows
        }
        // One row per token (or one without any): folded back into one push each.
        var claimed: [Claimed] = []
        var tokens: [PushPayload.Token] = []
        for (index, row) in rows.enumerated() {
            let id: Int64 = try row.decode("id")
            if let platform: String = try row.decode("platform") {
                tokens.append(PushPayload.Token(platform: platform, token: try row.decode("token"),
                                                deviceID: try row.decode("device_id")))
            }
            let next: Int64? = index + 1 < rows.count ? try rows[index + 1].decode("id") : nil
            guard next != id else { continue }
            let payload = PushPayload(
                notificationID: try row.decode("notification_id"), type: try row.decode("type"),
                recipientID: try row.decode("recipient_id"), actorID: try row.decode("actor_id"),
                actorUsername: try row.decode("username"), actorFullName: try row.decode("full_name"),
                postID: try row.decode("post_id"), commentID: try row.decode("comment_id"), tokens: tokens)
            claimed.append(Claimed(id: id, deliveryID: try row.decode("delivery_id"), attempts: try row.decode("attempts"),
                                   payload: payload))
            tokens = []
        }
        return claimed
    }

    /// Claimed pushes this sender will not try after all (it is stopping, or the receiver
    /// just failed another push of the batch): due again at once, the try not counted.
    func release(_ ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try pool.withConnection { connection in
            try connection.query("""
                UPDATE push_outbox SET attempts = attempts - 1, next_attempt_at = now()
                WHERE id = ANY(\(PostgresArray(ids))) AND failed_at IS NULL
                """)
        }
    }

    /// After the receiver's 2xx: the row has done its work.
    func markDelivered(_ ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try pool.withConnection { connection in
            try connection.query("DELETE FROM push_outbox WHERE id = ANY(\(PostgresArray(ids)))")
        }
    }

    /// A failed try: the next one after the backoff (the mailer's: 1 s, 2 s, 4 s … at most
    /// 5 min), but never past the window's end; a push already at the end of its window
    /// fails instead. Returns true when it failed.
    @discardableResult
    func scheduleRetry(_ push: Claimed, error: String) throws -> Bool {
        let delay = MailRetry.delaySeconds(afterAttempt: push.attempts)
        return try pool.withConnection { connection in
            try connection.query("""
                WITH target AS (
                    SELECT id, created_at + make_interval(secs => \(Self.deliveryWindowSeconds)) <= now() AS expired
                    FROM push_outbox WHERE id = \(push.id)
                )
                UPDATE push_outbox o SET last_error = \(String(error.prefix(500))),
                    failed_at = CASE WHEN target.expired THEN now() END,
                    next_attempt_at = least(now() + make_interval(secs => \(delay)),
                                            o.created_at + make_interval(secs => \(Self.deliveryWindowSeconds)))
                FROM target WHERE o.id = target.id
                RETURNING target.expired
                """).rows.first?.decode("expired") ?? false
        }
    }

    /// The periodic check: fails the pushes never tried that are already past the window
    /// (a backlog from while no sender ran: news hours late is noise), and deletes those
    /// that failed over a week ago, so the table stays bounded whatever the receiver does.
    /// Returns how many it failed.
    func expireAndPurge() throws -> Int {
        try pool.withConnection { connection in
            try connection.query("""
                WITH old AS (
                    SELECT id FROM push_outbox
                    WHERE failed_at < now() - make_interval(secs => \(Self.failedRetentionSeconds))
                    ORDER BY failed_at LIMIT 1000 FOR UPDATE SKIP LOCKED
                ), purged AS (
                    DELETE FROM push_outbox o USING old WHERE o.id = old.id
                ), stale AS (
                    SELECT id FROM push_outbox
                    WHERE failed_at IS NULL AND attempts = 0
                      AND created_at < now() - make_interval(secs => \(Self.deliveryWindowSeconds))
                    ORDER BY created_at, id LIMIT 1000 FOR UPDATE SKIP LOCKED
                )
                UPDATE push_outbox o SET failed_at = now(), last_error = 'not tried within the delivery window'
                FROM stale WHERE o.id = stale.id
                """).affectedRows
        }
    }

    /// Pushes neither delivered nor failed, on every instance together.
    func depth() throws -> Int {
        try pool.withConnection { connection in
            try connection.query("SELECT count(*) AS waiting FROM push_outbox WHERE failed_at IS NULL").firstRow().decode("waiting")
        }
    }
}
