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
/// carries (`WriteLocks`, which also says the one order they are taken in): two such
/// transactions take the lock one after the other, the second gets its xid only once it
/// holds the lock, after the first has committed. Their keys are then in commit order;
/// transactions that share no state are independent, and their relative order changes
/// nothing a client can build from the changes.
///
/// A delete walks a subtree and removes it; a reparent checks that the new parent is not
/// inside the moved subtree. Neither may race a write that changes the shape it read. So
/// they lock the posts whose shape they depend on (see `TreeLocks`): a delete every post of
/// the subtree and its parent, a reparent the post, both parents and the new parent's
/// ancestors. A write about one post takes that post's lock, and every write that changes
/// a `parent_id` (create, reparent) or removes a row (delete) holds the lock of the parent
/// it names. Those locks are taken, then what they cover read again, until the read finds
/// nothing unlocked: from then on nothing the operation depends on can change until it
/// commits. An operation over more than `WriteLocks.maxPosts` posts takes the whole tree
/// alone instead: every other post write shares the tree's lock.
///
/// Every write is stated as a `Write` (its locks, its target, its steps, its events) and
/// run by `EventEffects.run`, which takes or checks the locks first and records the events'
/// changes (`ChangeRows`) in the same statement, after them.
enum ChangeLog {}
