import Postgres

/// How writes record their changes so that readers never skip one, and the order they are
/// delivered in. This is the argument the whole feed rests on.
///
/// A sequence number is taken when a row is inserted, not when its transaction commits: a
/// reader of `position > last` can pass over a row that commits later with a lower number
/// and lose it forever. So a change is keyed by (txid, position), where txid is the xid of
/// the transaction that wrote it, and a reader delivers only changes whose txid is below
/// the xmin horizon of its snapshot (`pg_snapshot_xmin(pg_current_snapshot())`), in key
/// order. Every transaction with an xid below the horizon has ended; a transaction still
/// running has an xid at or above it; a transaction yet to write gets an xid larger than
/// any assigned so far. So the set of changes below the horizon is final: nothing can
/// appear later with a smaller key, and a cursor (the key of the last change delivered)
/// never skips. The price: one long transaction anywhere in the cluster holds delivery
/// back until it ends (the server keeps its own write transactions short; the feed's lag
/// shows the rest).
///
/// Key order is xid order, not commit order, and two transactions that change the same
/// state must not be delivered in the opposite order of their commits (a client applying
/// "like_count 6" after "like_count 7" would be left wrong). An xid is assigned at a
/// transaction's first write. So, before its first write, every write that records a
/// change takes the advisory lock of each post (or profile) whose state its change
/// carries, in key order: two such transactions take the lock one after the other, the
/// second gets its xid only once it holds the lock, after the first has committed. Their
/// keys are then in commit order; transactions that share no state are independent, and
/// their relative order changes nothing a client can build from the changes.
///
/// Lock keys: a post's is its id, a profile's the negated user id (ids are positive), in
/// the one-bigint space of advisory locks; other locks of this server use the two-int space.
enum ChangeLog {
    /// `SELECT` of the advisory locks for these posts, smallest key first (so two writes
    /// that lock the same posts cannot deadlock on them): the first statement of a
    /// transaction that records a change about them, or a CTE every write of it depends on.
    static func lock(posts ids: [Int64?]) -> SQLQuery {
        let keys = Array(Set(ids.compactMap { $0 })).sorted()
        if keys.count == 1 { return "SELECT pg_advisory_xact_lock(\(keys[0]))" }
        return "SELECT pg_advisory_xact_lock(id) FROM unnest(\(PostgresArray(keys))) AS id ORDER BY id"
    }

    static func lock(profile userID: Int64) -> SQLQuery {
        "SELECT pg_advisory_xact_lock(\(-userID))"
    }
}
