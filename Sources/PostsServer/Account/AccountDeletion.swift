import Postgres

/// `DELETE /api/me` (API.md "Sessions and the account"): the account is gone in one
/// transaction (its follows, past `WriteLocks.maxProfiles` partners, in the `AccountPurge`
/// job's, the account hidden and signed out meanwhile), and every change it makes to what
/// others see is recorded (each statement says what happened, and records what follows, as
/// every write does: `EventEffects`). A post of the account under which someone else has posted
/// stays as a tombstone of the reserved user; every other post of it goes with its subtree
/// (then the account's alone). The account's likes and comments on the posts that stay go
/// too, their counters kept exact. Its images are queued for deletion in the same
/// transaction.
struct AccountDeletion: Sendable {
    var pool: ConnectionPool
    let effects: EventEffects
    let images: ImageStore
    /// When a large account's deletion hides it (`AccountPurge.begin`).
    let clock: ServerClock

    func delete(_ userID: Int64) throws {
        try pool.withTransaction { connection in
            // Every post and profile whose state a change below carries, locked before the
            // first write, in the one order (`WriteLocks`): its own profile, those of its
            // follows' other sides, the posts it touched. Past the cap the follows are left
            // to an `account.purge` job (`AccountPurge`), a batch of partners at a time.
            var locks = WriteLocks.profiles([userID])
            let partners = try Self.followPartners(of: userID, limit: WriteLocks.maxProfiles + 1, on: connection)
            let purgedLater = partners.count > WriteLocks.maxProfiles
            if !purgedLater { for partner in partners { locks.add(profile: partner, .exclusive) } }
            try TreeLocks.lock(on: connection, with: locks) { try Self.touchedPosts(of: userID, on: connection) }
            // A follow made between the read and the locks: its other side too (out of the
            // order, as a later round of TreeLocks; a deadlock is detected and retried).
            if !purgedLater && locks.people == .shared {
                let partnersNow = try Self.followPartners(of: userID, limit: WriteLocks.maxProfiles + 1, on: connection)
                let late = Set(partnersNow).subtracting(partners)
                if !late.isEmpty { try Write.take(.profiles(Array(late)), on: connection) }
            }
            // The account's rows: from here a post, like or comment of it that another of its
            // sessions starts waits on its foreign key and fails once the account is gone,
            // rather than being swept away by the cascade unrecorded.
            try connection.query("""
                SELECT 1 FROM users u JOIN profiles p ON p.user_id = u.id WHERE u.id = \(userID) FOR UPDATE
                """)
            let posts = try Self.ownPosts(of: userID, on: connection)
            let kept = try Self.tombstones(of: userID, on: connection)
            let gone = Set(posts.keys).subtracting(kept)
            try AccountWithdrawal.likesAndComments(of: userID, except: gone, effects: effects, on: connection)
            let buried = try Self.bury(kept, by: userID, effects: effects, on: connection)
            let removed = try removeSubtrees(of: gone, posts: posts, by: userID, on: connection)
            let avatar = purgedLater ? try AccountPurge.begin(userID, effects: effects, clock: clock, on: connection)
                                     : try Self.removeUser(userID, effects: effects, on: connection)
            try images.drop(buried + removed + [avatar], on: connection)
        }
    }

    /// Up to `limit` of those the account follows or is followed by (one past the cap says
    /// the follows are left to the purge), each once. `UNION ALL` and a limit on each side:
    /// a `UNION` reads every follower to remove duplicates before it can stop.
    static func followPartners(of userID: Int64, limit: Int, on connection: PostgresConnection) throws -> [Int64] {
        var seen = Set<Int64>()
        return try connection.query("""
            (SELECT followee_id AS id FROM follows WHERE follower_id = \(userID) LIMIT \(literal: limit))
            UNION ALL (SELECT follower_id FROM follows WHERE followee_id = \(userID) LIMIT \(literal: limit))
            """).rows.compactMap { row -> Int64? in
            let id: Int64 = try row.decode("id")
            return seen.insert(id).inserted ? id : nil
        }.prefix(limit).map { $0 }
    }

    /// The account's posts, their parents, and the posts it liked or commented on.
    private static func touchedPosts(of userID: Int64, on connection: PostgresConnection) throws -> Set<Int64> {
        Set(try connection.query("""
            SELECT id FROM posts WHERE user_id = \(userID)
            UNION SELECT parent_id FROM posts WHERE user_id = \(userID) AND parent_id IS NOT NULL
            UNION SELECT post_id FROM likes WHERE user_id = \(userID)
            UNION SELECT post_id FROM comments WHERE user_id = \(userID)
            UNION SELECT c.post_id FROM comment_likes cl JOIN comments c ON c.id = cl.comment_id WHERE cl.user_id = \(userID)
            """).rows.map { try $0.decode("id", as: Int64.self) })
    }

    /// The account's posts by id, with their parents (0 for a root).
    private static func ownPosts(of userID: Int64, on connection: PostgresConnection) throws -> [Int64: Int64] {
        var posts: [Int64: Int64] = [:]
        for row in try connection.query("SELECT id, coalesce(parent_id, 0) AS parent FROM posts WHERE user_id = \(userID)").rows {
            posts[try row.decode("id")] = try row.decode("parent")
        }
        return posts
    }

    /// The account's posts with someone else's post anywhere below: the ancestors of every
    /// other user's post whose parent is the account's, walked up once each.
    private static func tombstones(of userID: Int64, on connection: PostgresConnection) throws -> Set<Int64> {
        Set(try connection.query("""
            WITH RECURSIVE up(id) AS (
                SELECT c.parent_id FROM posts c JOIN posts p ON p.id = c.parent_id
                WHERE p.user_id = \(userID) AND c.user_id <> \(userID)
                UNION
                SELECT x.parent_id FROM posts x JOIN up ON x.id = up.id WHERE x.parent_id IS NOT NULL
            )
            SELECT up.id FROM up JOIN posts p ON p.id = up.id WHERE p.user_id = \(userID)
            """).rows.map { try $0.decode("id", as: Int64.self) })
    }

    /// Empties the posts that stay and gives them to the reserved user (whose `posts_count`
    /// takes them over from their authors'), with their `post.updated`; their images. Also a
    /// moderator's removal of a post with others' replies below (`userID`: who acts).
    static func bury(_ kept: Set<Int64>, by userID: Int64, effects: EventEffects,
                     on connection: PostgresConnection) throws -> [String?] {
        guard !kept.isEmpty else { return [] }
        let reserved = try ReservedUser.id(clock: effects.clock, on: connection)
        let ids = PostgresArray(Array(kept))
        return try effects.run(Write(
            locking: .held,
            steps: ["""
            old AS (SELECT id, image_url, user_id FROM posts WHERE id = ANY(\(ids))),
            p AS (
                UPDATE posts SET title = '[deleted]', summary = '', body = '', image_url = NULL, image_width = NULL,
                                 image_height = NULL, location_tag = NULL, timezone = 'UTC', ai_generated = false, deleted = true,
                                 mentions = NULL, tags = NULL, user_id = \(reserved)
                WHERE id = ANY(\(ids)) RETURNING *
            ), untagged AS (
                DELETE FROM post_tags WHERE post_id = ANY(\(ids))
            ), moved AS (
                SELECT user_id, -count(*) AS n FROM old GROUP BY user_id
                UNION ALL SELECT \(reserved), (SELECT count(*) FROM p)
            ), counted AS (
                UPDATE profiles pr SET posts_count = pr.posts_count + m.n
                FROM (SELECT user_id, sum(n) AS n FROM moved GROUP BY user_id ORDER BY user_id) m WHERE pr.user_id = m.user_id
            )
            """],
            events: [(.postUpdated, EventTable.postUpdated.cte([
                "seq": "row_number() OVER (ORDER BY p.id)", "post": "p.id", "parent": "p.parent_id", "actor": "\(userID)",
                "json": "\(unsafeSQL: PostShape.json)", "moved": "false", "old_parent": "NULL",
                "mentions_added": "NULL", "mentions_removed": "NULL",
            ], "FROM p \(unsafeSQL: PostShape.authorJoin)"))],
            answer: """
            SELECT image_url FROM old
            """), on: connection).rows.map { try $0.decode("image_url") }
    }

    /// Deletes the posts that go, each topmost one with its subtree (all the account's),
    /// with one `post.deleted` for each topmost one; their images.
    private func removeSubtrees(of gone: Set<Int64>, posts: [Int64: Int64], by userID: Int64,
                                on connection: PostgresConnection) throws -> [String?] {
        let tops = gone.filter { !gone.contains(posts[$0] ?? 0) }.sorted()
        guard !tops.isEmpty else { return [] }
        return try effects.run(Write(
            locking: .held,
            steps: ["""
            sub(id, top) AS (
                SELECT id, id FROM posts WHERE id = ANY(\(PostgresArray(tops)))
                UNION ALL
                SELECT c.id, sub.top FROM posts c JOIN sub ON c.parent_id = sub.id
            ), removed AS (
                DELETE FROM posts p USING sub WHERE p.id = sub.id RETURNING p.id, sub.top, p.image_url
            ), tops AS (
                SELECT * FROM unnest(\(PostgresArray(tops)), \(PostgresArray(tops.map { posts[$0] ?? 0 }))) AS t(id, parent)
            ), counts AS (
                SELECT parent, count(*) AS n FROM tops WHERE parent <> 0 GROUP BY parent
            ), parent AS (
                UPDATE posts p SET child_count = p.child_count - counts.n FROM counts WHERE p.id = counts.parent
                RETURNING p.id, p.child_count
            ), grouped AS (
                SELECT top, array_agg(id ORDER BY id) AS ids FROM removed GROUP BY top
            )
            """],
            events: [(.postsDeleted, EventTable.postsDeleted.cte([
                "seq": "row_number() OVER (ORDER BY tops.id)", "post": "tops.id", "parent": "nullif(tops.parent, 0)",
                "parent_child_count": "parent.child_count", "actor": "\(userID)", "deleted_ids": "grouped.ids",
            ], "FROM tops JOIN grouped ON grouped.top = tops.id LEFT JOIN parent ON parent.id = tops.parent"))],
            answer: """
            SELECT image_url FROM removed
            """), on: connection).rows.map { try $0.decode("image_url") }
    }

    /// Its follows both ways with the other sides' counters (the caller holds their
    /// locks: at most `WriteLocks.maxProfiles` of them), its profile's deletion, then the
    /// user row (its profile, tokens, keys, likes and comments go with it by cascade), its
    /// codes and messages; its avatar. (A purged account's profile went at its deletion,
    /// with its `profile.deleted`: none is recorded twice.)
    static func removeUser(_ userID: Int64, effects: EventEffects, on connection: PostgresConnection) throws -> String? {
        try effects.run(FollowEdges.removing(where: "f.follower_id = \(userID) OR f.followee_id = \(userID)", actor: userID,
                                             byAccountDeletion: true), on: connection)
        let row = try effects.run(Write(
            locking: .held,
            steps: ["""
            gone AS (DELETE FROM users WHERE id = \(userID) RETURNING email),
            codes AS (DELETE FROM login_codes WHERE email = (SELECT email FROM gone)),
            mail AS (DELETE FROM outbox WHERE recipient = (SELECT email FROM gone))
            """],
            events: [(.profileDeleted, EventTable.profileDeleted.cte(["seq": "1", "user_id": "pr.user_id"], "FROM profiles pr WHERE pr.user_id = \(userID)"))],
            answer: """
            SELECT (SELECT avatar_url FROM profiles WHERE user_id = \(userID)) AS avatar_url
            """), on: connection).firstRow()
        return try row.decode("avatar_url")
    }
}
