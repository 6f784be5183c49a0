import Foundation
import Postgres

/// Deletes what sign-in, mail, sessions, retries, notifications, push tokens and the home
/// feeds leave behind once it is of no use, so that no table grows for ever and no code or
/// credential rests in the database longer than it must (API.md "Sign-in mail": expired
/// codes, outbox rows and Idempotency-Key rows older than 24 h go "at least hourly"; "Feeds
/// at any scale": notifications past `NOTIFICATIONS_RETENTION` or past a recipient's newest
/// 1,000, feed rows past a reader's depth, push tokens past `PUSH_TOKEN_RETENTION`). A round
/// runs each time the recurring job `upkeep.prune` does (`JobKind.upkeepPrune`: every 30 s,
/// on whichever instance claims it), and counts what each rule removed for /metrics.
///
/// In short batches, each one statement on its own (no transaction held across them, the
/// connection back to the pool in between), found through an index, oldest first. Rows
/// locked by a request at that moment (a code being checked) are skipped, not waited for:
/// the next round takes them. Several instances may run it at once; they skip each other's
/// rows the same way.
struct UpkeepPruner: Sendable {
    /// The requests' pool, for a round a test runs; the job's rounds use the job runner's.
    var pool: ConnectionPool
    /// `TOKEN_TTL`: a token unused this long is dead, and its row goes.
    let tokenLifetimeSeconds: Int64
    /// `NOTIFICATIONS_RETENTION` and `PUSH_TOKEN_RETENTION`.
    var notificationsRetentionSeconds: Int64 = 90 * 24 * 3600
    var pushTokenRetentionSeconds: Int64 = 270 * 24 * 3600
    /// What "now" is for every expiry (the server's clock, which tests advance).
    let clock: ServerClock
    /// Rows removed since the start, by rule; and where the per-user caps' sweep is.
    let counters = UpkeepCounters()

    /// Rows one statement deletes at most: a few milliseconds of work.
    static let batch = 1000

    /// One kind of leftover: which rows of `table` are past their retention, and the
    /// indexed column that finds the oldest first.
    struct Rule: Sendable {
        /// The rule's name in /metrics (`upkeep_removed_total{rule=…}`).
        let name: String
        let table: String
        let expired: SQLQuery
        let oldestFirst: String

        /// Up to `batch` of them: picked and locked through the index, then deleted by
        /// their row addresses (a join back on the key would read the whole table).
        var deleteBatch: SQLQuery {
            """
            DELETE FROM \(unsafeSQL: table) WHERE ctid = ANY(ARRAY(
                SELECT ctid FROM \(unsafeSQL: table) WHERE \(expired)
                ORDER BY \(unsafeSQL: oldestFirst) LIMIT \(UpkeepPruner.batch) FOR UPDATE SKIP LOCKED))
            """
        }
    }

    /// The retention of each (CHANGELOG.md lists them for operators).
    var rules: [Rule] { [
        // A code lives 10 minutes, but the send-code limit counts an address's codes of the
        // last hour, used or not: they stay that long.
        Rule(name: "login_codes", table: "login_codes",
             expired: "created_at < \(clock.now) - interval '1 hour' AND expires_at < \(clock.now)", oldestFirst: "created_at"),
        // API.md: outbox rows older than 24 h, sent or not (the code in one is long dead).
        Rule(name: "outbox", table: "outbox", expired: "created_at < \(clock.now) - interval '24 hours'", oldestFirst: "created_at"),
        // API.md: a key answers its first answer again within 24 hours, not after.
        Rule(name: "idempotency_keys", table: "idempotency_keys", expired: "created_at < \(clock.now) - interval '24 hours'",
             oldestFirst: "created_at"),
        // Jobs given up on are kept a week for the operator (`last_error`), then go.
        Rule(name: "dead_jobs", table: "jobs", expired: "state = 'dead' AND finished_at < \(clock.now) - interval '7 days'", oldestFirst: "finished_at"),
        // A revoked token is 401 whether its row exists or not.
        Rule(name: "revoked_tokens", table: "tokens", expired: "revoked_at IS NOT NULL", oldestFirst: "revoked_at"),
        // API.md "Sessions": a token expires after TOKEN_TTL (90 days by default) without use.
        Rule(name: "expired_tokens", table: "tokens",
             expired: "revoked_at IS NULL AND last_used_at < \(clock.now) - make_interval(secs => \(Double(tokenLifetimeSeconds)))",
             oldestFirst: "last_used_at"),
        // API.md "Feeds at any scale": NOTIFICATIONS_RETENTION (90 days by default).
        Rule(name: "old_notifications", table: "notifications",
             expired: "created_at < \(clock.now) - make_interval(secs => \(Double(notificationsRetentionSeconds)))",
             oldestFirst: "created_at"),
        // A token its app has not registered again for PUSH_TOKEN_RETENTION (270 days).
        Rule(name: "unused_push_tokens", table: "push_tokens",
             expired: "created_at < \(clock.now) - make_interval(secs => \(Double(pushTokenRetentionSeconds)))",
             oldestFirst: "created_at"),
        // API.md "Federation": an activity received is applied once. Its Date must be within an
        // hour and senders give up after days (Mastodon: about a week): a month covers both.
        Rule(name: "inbox_activities", table: "inbox_activities",
             expired: "received_at < \(clock.now) - interval '30 days'", oldestFirst: "received_at"),
        // An activity of ours once no delivery of it can be tried (their window is 2 days).
        Rule(name: "outgoing_activities", table: "outgoing_activities",
             expired: "created_at < \(clock.now) - interval '3 days'", oldestFirst: "created_at"),
    ] }

    /// Runs every rule until it finds fewer than a batch, then the per-user caps' sweep from
    /// past user `sweptPast` (`sweepCaps`); returns the rows removed per table, and where the
    /// sweep stopped.
    func pruneOnce(sweepingPast sweptPast: Int64) throws -> (removed: [String: Int], sweptPast: Int64) {
        var removed: [String: Int] = [:]
        for rule in rules {
            while true {
                let count = try pool.withRetriedStatement { try $0.query(rule.deleteBatch).affectedRows }
                removed[rule.table, default: 0] += count
                counters.add(count, to: rule.name)
                if count < Self.batch { break }
            }
        }
        let swept = try sweepCaps(past: sweptPast)
        for (table, count) in swept.removed { removed[table, default: 0] += count }
        return (removed, swept.sweptPast)
    }

    /// A round as a test runs it: the sweep from the first user.
    @discardableResult
    func pruneOnce() throws -> [String: Int] {
        try pruneOnce(sweepingPast: 0).removed
    }
}

extension UpkeepPruner {
    /// Where the caps' sweep stopped, as the `upkeep.prune` job keeps it: `{"swept_past": id}`
    /// (`{}` before the first round: from the first user).
    private struct Place: Decodable {
        let sweptPast: Int64?

        enum CodingKeys: String, CodingKey {
            case sweptPast = "swept_past"
        }
    }

    /// The worker of `upkeep.prune`: each try is a round, on the job runner's own connections
    /// (never a request's). The sweep goes on from the place the job keeps rather than one
    /// this instance remembers: rounds fall to whichever instance claims the job, and with a
    /// place per instance each would sweep every user again from its own start, N instances
    /// taking N times as long to reach each user.
    var worker: JobWorker {
        .recurring(.upkeepPrune) { [self] job, context in
            var pruner = self
            pruner.pool = context.pool
            let start = (try? JSONDecoder().decode(Place.self, from: Data(job.payload.utf8)))?.sweptPast ?? 0
            let round = try pruner.pruneOnce(sweepingPast: start)
            // Only while the job is still this runner's: one whose lease ended belongs to the
            // round that claimed it since, and so does the place.
            try context.pool.withRetriedStatement { connection in
                try connection.query("""
                    UPDATE jobs SET payload = json_build_object('swept_past', \(round.sweptPast))
                    WHERE id = \(job.id) AND attempts = \(job.attempts)
                    """)
            }
        }
    }
}
