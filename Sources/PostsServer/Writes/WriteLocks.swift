import Postgres

/// What a write transaction touches, declared before its first write, and the advisory
/// locks that come of it, always taken in one global order (`sql`):
///
/// 1. the **tree** lock: shared by every write about posts, exclusive for one too large to
///    lock post by post (`TreeLocks`) and for the demo seed;
/// 2. the **people** lock: shared by every write that locks a profile, exclusive for one
///    that would lock more than `maxProfiles` (an account with many follows, deleted);
/// 3. **profiles**, smallest key first (a profile's key is its negated user id), each
///    exclusive (its follows or counters change: follow, block, profile edit, account
///    deletion) or shared (a new post by its author: its followers hold still);
/// 4. **posts**, smallest id first (the post's state, counters or children change).
///
/// Why locks at all, and why before the first write, is `ChangeLog`'s argument: two writes
/// about the same state commit in the order their changes are keyed. Why one order: two
/// transactions that take locks in the same order never wait for each other in a cycle.
/// Why caps: PostgreSQL's lock table is shared (64 × max_connections entries by default),
/// and a statement taking one lock per follower ran out of it ("out of shared memory").
/// Past a cap the class is taken whole instead, which covers each of its members.
/// (A later round of `TreeLocks` may take posts out of order: a deadlock that causes is
/// detected by PostgreSQL and the transaction run again by `withTransaction`.)
struct WriteLocks: Sendable {
    enum Mode: Sendable {
        case shared, exclusive
    }

    static let maxPosts = 256
    static let maxProfiles = 256

    private(set) var tree: Mode?
    private(set) var people: Mode?
    private var profiles: [Int64: Mode] = [:]
    private var posts: Set<Int64> = []

    init() {}

    /// The locks of a write about these posts (nil ids are ignored): the tree shared, and
    /// each post, or the tree alone past `maxPosts`.
    static func posts(_ ids: [Int64?]) -> WriteLocks {
        var locks = WriteLocks()
        locks.add(posts: ids)
        return locks
    }

    /// The locks of a write about these users' follows or profiles.
    static func profiles(_ ids: [Int64], _ mode: Mode = .exclusive) -> WriteLocks {
        var locks = WriteLocks()
        for id in ids { locks.add(profile: id, mode) }
        return locks
    }

    /// The whole tree, alone: for a write over more posts than are worth locking one by one.
    static let wholeTree: WriteLocks = {
        var locks = WriteLocks()
        locks.tree = .exclusive
        return locks
    }()

    mutating func add(posts ids: [Int64?]) {
        if tree == nil { tree = .shared }
        guard tree == .shared else { return }
        posts.formUnion(ids.compactMap { $0 })
        if posts.count > Self.maxPosts {
            tree = .exclusive
            posts = []
        }
    }

    mutating func add(profile id: Int64, _ mode: Mode) {
        if people == nil { people = .shared }
        guard people == .shared else { return }
        if profiles[id] != .exclusive { profiles[id] = mode }
        if profiles.count > Self.maxProfiles { escalateProfiles() }
    }

    /// Every profile, exclusively: for a write whose profiles are too many to name.
    mutating func escalateProfiles() {
        people = .exclusive
        profiles = [:]
    }

    /// One `SELECT` that takes them all, in the global order: the first statement of the
    /// transaction, or a CTE named `lock` that the write's target waits for (`Write`:
    /// PostgreSQL then takes the locks before the writes, in one round trip).
    var sql: SQLQuery {
        var branches: [String] = []
        if let tree { branches.append("SELECT \(Self.call(tree, Self.treeKey))") }
        if let people { branches.append("SELECT \(Self.call(people, Self.peopleKey))") }
        var query: SQLQuery = ""
        for branch in branches {
            query.append(query.sql.isEmpty ? "" : " UNION ALL ")
            query.append(SQLQuery(unsafeSQL: branch))
        }
        if !profiles.isEmpty { query.append(Self.ordered(profiles.map { (-$0.key, $0.value) }, union: !query.sql.isEmpty)) }
        if !posts.isEmpty { query.append(Self.ordered(posts.map { ($0, .exclusive) }, union: !query.sql.isEmpty)) }
        return query.sql.isEmpty ? "SELECT 1" : query
    }

    /// The locks of a write about one post the statement finds itself (a comment's post):
    /// the tree shared, then the post of the `post_id` column of the CTE `source`.
    static func post(in source: String) -> SQLQuery {
        "SELECT \(unsafeSQL: call(.shared, treeKey)) UNION ALL SELECT pg_advisory_xact_lock(post_id) FROM \(unsafeSQL: source)"
    }

    /// The locks of these keys, smallest first, each in its mode. (A volatile function in
    /// the select list runs after the sort: the locks are taken in key order.)
    private static func ordered(_ locks: [(key: Int64, mode: Mode)], union: Bool) -> SQLQuery {
        let sorted = locks.sorted { $0.key < $1.key }
        var query: SQLQuery = union ? " UNION ALL " : ""
        if sorted.count == 1 {
            query.append("SELECT \(unsafeSQL: function(sorted[0].mode))(\(sorted[0].key))")
        } else if Set(sorted.map(\.mode)).count == 1 {
            query.append("""
                (SELECT \(unsafeSQL: function(sorted[0].mode))(key) FROM unnest(\(PostgresArray(sorted.map(\.key)))) AS key ORDER BY key)
                """)
        } else {
            query.append("""
                (SELECT CASE WHEN shared THEN pg_advisory_xact_lock_shared(key) ELSE pg_advisory_xact_lock(key) END
                 FROM unnest(\(PostgresArray(sorted.map(\.key))), \(PostgresArray(sorted.map { $0.mode == .shared ? "t" : "f" })))
                     AS l(key, shared_text), LATERAL (SELECT shared_text = 't' AS shared) m
                 ORDER BY key)
                """)
        }
        return query
    }

    private static func function(_ mode: Mode) -> String {
        mode == .shared ? "pg_advisory_xact_lock_shared" : "pg_advisory_xact_lock"
    }

    private static func call(_ mode: Mode, _ key: String) -> String {
        "\(function(mode))(\(key))"
    }

    /// In the two-int space of advisory locks (posts and profiles use the bigint one):
    /// "tree", "chg" and "peop", "chg" in ASCII.
    private static let treeKey = "\(0x7472_6565 as Int32), \(0x0063_6867 as Int32)"
    private static let peopleKey = "\(0x7065_6F70 as Int32), \(0x0063_6867 as Int32)"
}
