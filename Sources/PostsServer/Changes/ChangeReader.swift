import HTTP
import Postgres

/// Reading the change log: pages after a cursor, up to the xmin horizon (see `ChangeLog`),
/// in key order; the current position; and whether a cursor has fallen behind retention.
///
/// Always from the primary (`withConnection`, never `withReadConnection`), with replicas
/// too: the horizon that makes a page gap-free is the primary's own (`pg_snapshot_xmin` of
/// transactions a replica does not know are running), a cursor handed out by one database
/// must not be read on another that has not replayed as far (its client would wait, or
/// with the horizon of a replica, skip), and the live streams are woken by the primary's
/// commits (`LISTEN`), which a replica reading a moment later might not show yet.
struct ChangeReader: Sendable {
    var pool: ConnectionPool

    struct Page: Sendable {
        let changes: [Change]
        let next: ChangeKey
        let hasMore: Bool
        /// What was kept when the page was read: whether its cursor had fallen behind.
        let retention: Retention
    }

    /// The position now: every change that commits from here on comes after it.
    func currentPosition() throws -> ChangeKey {
        try pool.withConnection { try Self.currentPosition(on: $0) }
    }

    /// What has committed now, for a stream that starts here.
    func snapshot() throws -> ChangeSnapshot {
        try pool.withConnection { connection in
            let text: String = try connection.query("SELECT pg_current_snapshot()::text AS snapshot").firstRow().decode("snapshot")
            guard let snapshot = ChangeSnapshot(text) else { throw PostgresError(.decoding, details: "pg_current_snapshot() gave \(text)") }
            return snapshot
        }
    }

    static func currentPosition(on connection: PostgresConnection) throws -> ChangeKey {
        let horizon: Int64 = try connection.query("""
            SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon
            """).firstRow().decode("horizon")
        return .below(horizon: horizon)
    }

    /// In ms, how old the oldest change after `since` that has committed but is not yet
    /// below the horizon is: what a long-running transaction holds back; 0 when none. (The
    /// statement runs alone, so the clock's `now` is the statement's.)
    static func heldBackAge(after since: ChangeKey, clock: ServerClock, on connection: PostgresConnection) throws -> Int {
        var query: SQLQuery = """
            SELECT coalesce(floor(extract(epoch FROM \(clock.now) - (
                SELECT c.at FROM changes c WHERE true
            """
        query.append(since.after)
        query.append(" ORDER BY c.txid, c.position LIMIT 1)) * 1000), 0)::bigint AS age")
        let age: Int64 = try connection.query(query).firstRow().decode("age")
        return Int(max(0, age))
    }

    /// 410 when changes after `since` have already been pruned, or when `since` was never
    /// given out by this database (see `Retention`).
    func checkRetained(_ since: ChangeKey) throws {
        try pool.withConnection { connection in
            let row = try connection.query("""
                SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon,
                       (SELECT txid::text::bigint FROM changes_pruned) AS pruned_txid,
                       (SELECT position FROM changes_pruned) AS pruned_position
                """).firstRow()
            try Retention(row).check(since)
        }
    }

    /// Up to `limit` changes after `since` that match, oldest first; 410 when some after it
    /// are already pruned. One statement: the retention mark is read with the rows.
    func page(after since: ChangeKey, filter: ChangeFilter, limit: Int) throws -> Page {
        try pool.withConnection { connection in
            let page = try Self.page(after: since, through: nil, filter: filter, limit: limit, on: connection)
            try page.retention.check(since)
            return page
        }
    }

    /// The changes after `since` (and not after `through`, if given) below the horizon. When
    /// none match, the next cursor still moves up to the horizon, so that a follower with a
    /// narrow filter does not scan the same stretch again and again. The horizon and the
    /// retention mark come from the same statement, hence the same snapshot, as the rows:
    /// a later horizon could pass over changes this statement did not see, and a pruning
    /// that commits after it removed nothing from what it read.
    ///
    /// A filter is a union of ordered index walks, one per branch (see
    /// `ChangeFilter.branches`), each stopping after `limit + 1` rows, merged in key order:
    /// a page costs a few index probes however large the table, where one `OR` condition
    /// would read and sort every match after the cursor.
    static func page(after since: ChangeKey, through: ChangeKey?, filter: ChangeFilter, limit: Int,
                     on connection: PostgresConnection) throws -> Page {
        var window = since.after
        if let through { window.append(" AND (c.txid, c.position) <= (\(String(through.txid))::xid8, \(through.position))") }
        let branches = filter.branches.map { branch -> SQLQuery in
            """
            SELECT \(unsafeSQL: Change.columns) FROM changes c WHERE c.txid < pg_snapshot_xmin(pg_current_snapshot())\(window)\(branch)
            ORDER BY c.txid, c.position LIMIT \(literal: limit + 1)
            """
        }
        var changes = branches[0]
        if branches.count > 1 {
            changes = "SELECT * FROM ("
            for (index, branch) in branches.enumerated() { changes.append(index == 0 ? "(\(branch))" : " UNION ALL (\(branch))") }
            changes.append(") u ORDER BY u.txid, u.position LIMIT \(literal: limit + 1)")
        }
        let rows = try connection.query("""
            SELECT c.*, h.horizon, p.txid::text::bigint AS pruned_txid, p.position AS pruned_position
            FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon) h
            LEFT JOIN changes_pruned p ON true
            LEFT JOIN LATERAL (\(changes)) c ON true
            ORDER BY c.txid, c.position
            """).rows
        guard let first = rows.first else { throw PostgresError(.decoding, details: "a change page answered no row") }
        let retention = try Retention(first)
        let found = try rows.filter { try !$0.isNull("txid") }
        let page = try found.prefix(limit).map(Change.init(row:))
        if let last = page.last {
            return Page(changes: page, next: last.key, hasMore: found.count > limit, retention: retention)
        }
        var reach = ChangeKey.below(horizon: retention.horizon)
        if let through, through < reach { reach = through }
        return Page(changes: [], next: max(since, reach), hasMore: false, retention: retention)
    }
}

extension ChangeReader {
    /// What the database keeps, as one statement saw it: its xmin horizon and the highest
    /// key pruning has removed. Whether a cursor is still good is then a comparison in
    /// memory, for any number of cursors.
    struct Retention: Sendable {
        let horizon: Int64
        let pruned: ChangeKey?

        /// From a row with `horizon`, `pruned_txid` and `pruned_position` (NULL: nothing
        /// pruned yet).
        init(_ row: PostgresRow) throws {
            horizon = try row.decode("horizon")
            if let txid: Int64 = try row.decode("pruned_txid"), let position: Int64 = try row.decode("pruned_position") {
                pruned = ChangeKey(txid: txid, position: position)
            } else {
                pruned = nil
            }
        }

        /// Whether every change after `since` is still kept (none has been pruned) and
        /// `since` is not ahead of the horizon. Every cursor this database hands out is at
        /// or below the horizon, which only moves up; one ahead of it comes from another
        /// database, or from before a restore into a new cluster (whose transaction ids
        /// start lower): a follower holding it would silently miss every change until the
        /// ids caught up, so it resyncs instead.
        func keeps(_ since: ChangeKey) -> Bool {
            guard since <= ChangeKey.below(horizon: horizon) else { return false }
            guard let pruned else { return true }
            return !(since < pruned)
        }

        /// 410 `gone` unless it `keeps` the cursor.
        func check(_ since: ChangeKey) throws(APIError) {
            guard keeps(since) else {
                throw APIError(.gone, "changes after this cursor are no longer kept; resync from scratch")
            }
        }
    }
}
