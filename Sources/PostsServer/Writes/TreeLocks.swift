import Postgres

/// The locks a delete or a reparent holds on the posts whose shape it depends on (see
/// `ChangeLog`): taken, then what they cover read again, until the read names no post
/// left unlocked. Only posts' advisory locks: nothing is written, so the transaction has
/// no xid yet when they are all held.
enum TreeLocks {
    /// Rounds of "lock, read again" before giving up: each round only runs when a
    /// concurrent write changed the shape between the read and the locks.
    private static let maxRounds = 16

    /// Locks every post `covered` names, reading it again after each round of locks, until
    /// it names none unlocked; returns its last answer. The first read decides: more than
    /// `WriteLocks.maxPosts` and the tree is taken alone (which covers everything). `with`:
    /// what else the write locks (its profiles), taken with the first round in the one order.
    @discardableResult
    static func lock(on connection: PostgresConnection, with others: WriteLocks = WriteLocks(),
                     covering covered: () throws -> Set<Int64>) throws -> Set<Int64> {
        var wanted = try covered()
        var first = others
        first.add(posts: Array(wanted))
        if first.tree == .exclusive {
            try Write.take(first, on: connection)
            return try covered()
        }
        // The first round takes everything in the one order (`WriteLocks`); a later round
        // takes its posts out of key order, and a deadlock that may cause is detected by
        // PostgreSQL and the transaction run again (`withTransaction`).
        try Write.take(first, on: connection)
        var held = wanted
        for _ in 0..<maxRounds {
            wanted = try covered()
            let missing = wanted.subtracting(held)
            if missing.isEmpty { return wanted }
            try connection.query("""
                SELECT pg_advisory_xact_lock(id) FROM unnest(\(PostgresArray(missing.sorted()))) AS id ORDER BY id
                """)
            held.formUnion(missing)
        }
        throw APIError(.unavailable, "the posts are changing too fast to lock; try again shortly", retryAfter: 1)
    }

    /// The post and every post below it.
    static func subtree(of id: Int64, on connection: PostgresConnection) throws -> Set<Int64> {
        Set(try connection.query("""
            WITH RECURSIVE subtree(id) AS (
                SELECT id FROM posts WHERE id = \(id)
                UNION ALL
                SELECT child.id FROM posts child JOIN subtree ON child.parent_id = subtree.id
            )
            SELECT id FROM subtree
            """).rows.map { try $0.decode("id", as: Int64.self) })
    }

    /// The post and its ancestors up to its root (none when it does not exist).
    static func chain(from id: Int64, on connection: PostgresConnection) throws -> Set<Int64> {
        Set(try connection.query("""
            WITH RECURSIVE up(id, parent_id, depth) AS (
                SELECT id, parent_id, 0 FROM posts WHERE id = \(id)
                UNION ALL
                SELECT p.id, p.parent_id, up.depth + 1 FROM posts p JOIN up ON p.id = up.parent_id
                WHERE up.depth < 100000
            )
            SELECT id FROM up
            """).rows.map { try $0.decode("id", as: Int64.self) })
    }
}
