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
/// A delete walks a subtree and removes it; a reparent checks that the new parent is not
/// inside the moved subtree. Neither may race a write that changes the shape it read. So
/// they lock the posts whose shape they depend on (see `TreeLocks`): a delete every post of
/// the subtree and its parent, a reparent the post, both parents and the new parent's
/// ancestors. A write about one post takes that post's lock, and every write that changes
/// a `parent_id` (create, reparent) or removes a row (delete) holds the lock of the parent
/// it names. Those locks are taken, then what they cover read again, until the read finds
/// nothing unlocked: from then on nothing the operation depends on can change until it
/// commits. An operation over more than `TreeLocks.maxLockedPosts` posts takes the whole
/// tree alone instead (as every operation did before): every other post write shares the
/// tree's lock, taken before its posts' locks.
///
/// Lock keys: a post's is its id, a profile's the negated user id (ids are positive), in
/// the one-bigint space of advisory locks; the tree's and the pruner's are in the two-int
/// space. (Idempotency keys hash into the bigint space; a collision with a small id would
/// only make two writes wait for each other.)
///
/// Every write records its change through `record(_:)`, in the statement (or transaction)
/// that makes it, after these locks.
enum ChangeLog {
    /// `SELECT` of the shared tree lock, then the advisory locks for these posts, smallest
    /// key first (so two writes that lock the same posts cannot deadlock on them): the
    /// first statement of a transaction that records a change about them, or a CTE named
    /// `lock` that every write of the statement depends on through `gate`.
    static func lock(posts ids: [Int64?]) -> SQLQuery {
        let keys = Array(Set(ids.compactMap { $0 })).sorted()
        switch keys.count {
        case 0: return "SELECT \(unsafeSQL: shareTree)"
        case 1: return "SELECT \(unsafeSQL: shareTree), pg_advisory_xact_lock(\(keys[0]))"
        default:
            return """
                SELECT \(unsafeSQL: shareTree) UNION ALL
                (SELECT pg_advisory_xact_lock(id) FROM unnest(\(PostgresArray(keys))) AS id ORDER BY id)
                """
        }
    }

    /// The lock of the post a statement finds itself (a comment's post): a `lock` CTE over
    /// `source`, whose `post_id` column names it.
    static func lock(postIn source: String) -> SQLQuery {
        "SELECT \(unsafeSQL: shareTree), pg_advisory_xact_lock(post_id) FROM \(unsafeSQL: source)"
    }

    static func lock(profile userID: Int64) -> SQLQuery {
        "SELECT pg_advisory_xact_lock(\(-userID))"
    }

    /// What each write of a statement with a `lock` CTE adds to its WHERE: PostgreSQL then
    /// takes the locks before the write, in the same round trip.
    static let gate = "(SELECT count(*) FROM lock) >= 0"

    /// The tree alone, before anything else: for operations too large to lock post by post
    /// (and the demo seed).
    static let lockTree: SQLQuery = "SELECT pg_advisory_xact_lock(\(unsafeSQL: treeKey))"

    /// The shared tree lock as an expression, for a statement's own lock CTE.
    static let shareTree = "pg_advisory_xact_lock_shared(\(treeKey))"

    /// "tree", "chg" in ASCII.
    private static let treeKey = "\(0x7472_6565 as Int32), \(0x0063_6867 as Int32)"
}
