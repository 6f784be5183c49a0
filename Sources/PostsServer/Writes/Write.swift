import Postgres

/// One write, as every service states it: when its locks are taken, the row it acts on,
/// its own steps, the events they make, and its answer. `EventEffects.run` assembles the
/// one statement in the one order — `lock`, `target`, the steps, the events, what follows
/// from them — so a service supplies only what is its own: the gate that makes the target
/// wait for the locks, the order of the parts, the refusal columns and waking the job
/// runner are here and in `EventEffects`.
///
/// Why the locks come first, and why before the transaction's first write, is `ChangeLog`'s
/// argument; which locks and in which order, `WriteLocks`'.
struct Write {
    /// When the write's advisory locks are taken.
    enum Locking {
        /// Known before the statement: its first CTE, `lock`, which the target waits for.
        case first(WriteLocks)
        /// The post in the `post_id` column of `located` (a comment's post, found by a read
        /// of its own): the CTE `located`, then `lock` (the tree shared, that post), then the
        /// target, which waits for them.
        case postOf(located: SQLQuery)
        /// In a statement of their own before this one, in the write's transaction
        /// (`Write.take`, `TreeLocks`): this statement holds them already.
        case held
        /// None: its changes carry no post's or profile's state (a mute, a block taken back:
        /// a private change to the user whose sets changed).
        case none
    }

    /// The row (or rows) acted on, read once the locks are held: `statement` is a `SELECT`,
    /// `UPDATE` or `DELETE` that ends with its `WHERE` condition, to which the gate on the
    /// locks is added, then `tail` (`FOR KEY SHARE`, `RETURNING …`). A `SELECT` target that
    /// names `tombstone` and `blocked` columns can be answered with `refusal`.
    struct Target {
        var statement: SQLQuery
        var tail: SQLQuery = ""
    }

    var locking: Locking
    var target: Target?
    /// The service's own CTEs, each `name AS (…)`, in order after the target.
    var steps: [SQLQuery] = []
    /// The statement's events (`EventTable.cte`); their changes are recorded in this order.
    var events: [(table: EventTable, cte: SQLQuery)] = []
    /// The step that updated profiles' counters (`RETURNING pr.*`), if any: see
    /// `EventEffects.ctes`.
    var profilesCounted: String?
    /// The statement's own query: what the service answers.
    var answer: SQLQuery
    /// A step queues a job itself (rather than an effect of its events): the job runner
    /// is woken at the commit.
    var queuesJobs: Bool

    init(locking: Locking, target: Target? = nil, steps: [SQLQuery] = [], events: [(table: EventTable, cte: SQLQuery)] = [],
         profilesCounted: String? = nil, answer: SQLQuery, queuesJobs: Bool = false) {
        self.locking = locking
        self.target = target
        self.steps = steps
        self.events = events
        self.profilesCounted = profilesCounted
        self.answer = answer
        self.queuesJobs = queuesJobs
    }

    /// What each part of a statement with a `lock` CTE adds to its `WHERE` to run after it:
    /// PostgreSQL evaluates the sub-select once, before the row it gates is read.
    static let gate: SQLQuery = "(SELECT count(*) FROM lock) >= 0"

    /// The answer's columns that say what the target was, for `Visibility.Target(refusal:)`:
    /// `found`, `tombstone`, `blocked`.
    static let refusal: SQLQuery = """
        (SELECT count(*) FROM target) AS found, coalesce((SELECT tombstone FROM target), false) AS tombstone,
        coalesce((SELECT blocked FROM target), false) AS blocked
        """

    /// Takes `locks` in a statement of their own: the first of the write's transaction, for
    /// a write that reads under them before it writes (`Locking.held` after it).
    static func take(_ locks: WriteLocks, on connection: PostgresConnection) throws {
        try connection.query(locks.sql)
    }

    /// The CTEs before the steps: the locks (if taken here) and the target, gated on them.
    var head: [SQLQuery] {
        var parts: [SQLQuery] = []
        var gated = false
        switch locking {
        case .first(let locks):
            parts.append("lock AS (\(locks.sql))")
            gated = true
        case .postOf(let located):
            parts.append("located AS (\(located))")
            parts.append("lock AS (\(WriteLocks.post(in: "located")))")
            gated = true
        case .held, .none:
            break
        }
        if let target {
            var part: SQLQuery = "target AS ("
            part.append(target.statement)
            if gated {
                part.append(" AND ")
                part.append(Self.gate)
            }
            part.append(" ")
            part.append(target.tail)
            part.append(")")
            parts.append(part)
        }
        return parts
    }
}

extension Visibility.Target {
    /// What a write's answer says of its target (`Write.refusal`'s columns).
    init(refusal row: PostgresRow, gives: Bool = true) throws {
        self.init(found: try row.decode("found", as: Int.self) > 0, tombstone: try row.decode("tombstone"),
                  blocked: try row.decode("blocked"), gives: gives)
    }
}
