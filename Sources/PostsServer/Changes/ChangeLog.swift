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
/// A delete walks a subtree and removes it: a write about a post below (a like, a child)
/// that took no lock the delete takes could get its xid after the delete's and commit
/// first, or add a child the walk missed. So the tree's shape has a lock of its own:
/// deletes and reparents hold it alone, every other write about posts shares it (taken
/// before the post's own). A delete then sees every post that exists and takes its xid
/// after every write about any of them has committed; the next ones wait for it.
///
/// Lock keys: a post's is its id, a profile's the negated user id (ids are positive), in
/// the one-bigint space of advisory locks; the tree's and the pruner's are in the two-int
/// space. (Idempotency keys hash into the bigint space; a collision with a small id would
/// only make two writes wait for each other.)
enum ChangeLog {
    /// `SELECT` of the shared tree lock, then the advisory locks for these posts, smallest
    /// key first (so two writes that lock the same posts cannot deadlock on them): the
    /// first statement of a transaction that records a change about them, or a CTE every
    /// write of it depends on. With several posts it is for deletes and reparents, which
    /// hold the tree alone already (`lockTree`).
    static func lock(posts ids: [Int64?]) -> SQLQuery {
        let keys = Array(Set(ids.compactMap { $0 })).sorted()
        switch keys.count {
        case 0: return "SELECT \(unsafeSQL: shareTree)"
        case 1: return "SELECT \(unsafeSQL: shareTree), pg_advisory_xact_lock(\(keys[0]))"
        default: return "SELECT pg_advisory_xact_lock(id) FROM unnest(\(PostgresArray(keys))) AS id ORDER BY id"
        }
    }

    /// Deletes and reparents: the tree alone, before anything else.
    static let lockTree: SQLQuery = "SELECT pg_advisory_xact_lock(\(unsafeSQL: treeKey))"

    /// The shared tree lock as an expression, for a statement's own lock CTE.
    static let shareTree = "pg_advisory_xact_lock_shared(\(treeKey))"

    /// "tree", "chg" in ASCII.
    private static let treeKey = "\(0x7472_6565 as Int32), \(0x0063_6867 as Int32)"

    static func lock(profile userID: Int64) -> SQLQuery {
        "SELECT pg_advisory_xact_lock(\(-userID))"
    }
}
