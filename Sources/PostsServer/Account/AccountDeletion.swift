import Postgres

/// `DELETE /api/me` (API.md "Sessions and the account"): the account is gone in one
/// transaction, and every change it makes to what others see is recorded. A post of the
/// account under which someone else has posted stays as a tombstone of the reserved user;
/// every other post of it goes with its subtree (then the account's alone). The account's
/// likes and comments on the posts that stay go too, their counters kept exact. Its images
/// are queued for deletion in the same transaction.
struct AccountDeletion: Sendable {
    let pool: ConnectionPool
    let images: ImageStore

    func delete(_ userID: Int64) throws {
        try pool.withTransaction { connection in
            // Every post and profile whose state a change below carries, locked before the
            // first write (its own profile's, and those of its follows' other sides).
            try connection.query(FollowEdges.lockProfiles(ofAllFollowsOf: userID))
            try TreeLocks.lock(on: connection) { try touchedPosts(of: userID, on: connection) }
            // The account's rows: from here a post, like or comment of it that another of its
            // sessions starts waits on its foreign key and fails once the account is gone,
            // rather than being swept away by the cascade unrecorded.
            try connection.query("""
                SELECT 1 FROM users u JOIN profiles p ON p.user_id = u.id WHERE u.id = \(userID) FOR UPDATE
                """)
            let posts = try ownPosts(of: userID, on: connection)
            let kept = try tombstones(of: userID, on: connection)
            let gone = Set(posts.keys).subtracting(kept)
            try withdrawLikesAndComments(of: userID, except: gone, on: connection)
            var files = try Self.bury(kept, by: userID, on: connection)
            files += try removeSubtrees(of: gone, posts: posts, by: userID, on: connection)
            files.append(try removeUser(userID, on: connection))
            try images.drop(files, on: connection)
        }
    }

    /// The account's posts, their parents, and the posts it liked or commented on.
    private func touchedPosts(of userID: Int64, on connection: PostgresConnection) throws -> Set<Int64> {
        Set(try connection.query("""
            SELECT id FROM posts WHERE user_id = \(userID)
            UNION SELECT parent_id FROM posts WHERE user_id = \(userID) AND parent_id IS NOT NULL
            UNION SELECT post_id FROM likes WHERE user_id = \(userID)
            UNION SELECT post_id FROM comments WHERE user_id = \(userID)
            UNION SELECT c.post_id FROM comment_likes cl JOIN comments c ON c.id = cl.comment_id WHERE cl.user_id = \(userID)
            """).rows.map { try $0.decode(at: 0, as: Int64.self) })
    }

    /// The account's posts by id, with their parents (0 for a root).
    private func ownPosts(of userID: Int64, on connection: PostgresConnection) throws -> [Int64: Int64] {
        var posts: [Int64: Int64] = [:]
        for row in try connection.query("SELECT id, coalesce(parent_id, 0) AS parent FROM posts WHERE user_id = \(userID)").rows {
            posts[try row.decode("id")] = try row.decode("parent")
        }
        return posts
    }

    /// The account's posts with someone else's post anywhere below: the ancestors of every
    /// other user's post whose parent is the account's, walked up once each.
    private func tombstones(of userID: Int64, on connection: PostgresConnection) throws -> Set<Int64> {
        Set(try connection.query("""
            WITH RECURSIVE up(id) AS (
                SELECT c.parent_id FROM posts c JOIN posts p ON p.id = c.parent_id
                WHERE p.user_id = \(userID) AND c.user_id <> \(userID)
                UNION
                SELECT x.parent_id FROM posts x JOIN up ON x.id = up.id WHERE x.parent_id IS NOT NULL
            )
            SELECT up.id FROM up JOIN posts p ON p.id = up.id WHERE p.user_id = \(userID)
            """).rows.map { try $0.decode(at: 0, as: Int64.self) })
    }

    /// The account's likes (of posts and of comments) and comments on the posts that stay
    /// (all but `gone`, whose rows go with them by cascade), with their counters and changes.
    private func withdrawLikesAndComments(of userID: Int64, except gone: Set<Int64>,
                                          on connection: PostgresConnection) throws {
        let goneIDs = PostgresArray(Array(gone))
        try connection.query("""
            WITH withdrawn AS (
                DELETE FROM likes WHERE user_id = \(userID) AND NOT (post_id = ANY(\(goneIDs))) RETURNING post_id
            ), upd AS (
                UPDATE posts p SET like_count = p.like_count - 1 FROM withdrawn WHERE p.id = withdrawn.post_id
                RETURNING p.id, p.parent_id, p.like_count
            )
            \(ChangeLog.record(ChangeRecord(
                kind: .likeChanged, postID: "upd.id", parentID: "upd.parent_id", userID: "\(userID)",
                data: [("liked", "false"), ("like_count", "upd.like_count")], source: "FROM upd ORDER BY upd.id")))
            """)
        try connection.query("""
            WITH withdrawn AS (
                DELETE FROM comment_likes cl USING comments c
                WHERE cl.user_id = \(userID) AND c.id = cl.comment_id AND NOT (c.post_id = ANY(\(goneIDs)))
                RETURNING cl.comment_id
            ), upd AS (
                UPDATE comments c SET like_count = c.like_count - 1 FROM withdrawn WHERE c.id = withdrawn.comment_id
                RETURNING c.id, c.post_id, c.like_count
            )
            \(ChangeLog.record(ChangeRecord(
                kind: .commentLiked, postID: "upd.post_id", parentID: "p.parent_id", userID: "\(userID)",
                data: [("comment_id", "upd.id"), ("liked", "false"), ("like_count", "upd.like_count")],
                source: "FROM upd JOIN posts p ON p.id = upd.post_id ORDER BY upd.post_id, upd.id")))
            """)
        // The account's comments, and the others' replies under its top-level ones (they go
        // with their thread): every row deleted here is counted here, so the post's count
        // and the threads' `reply_count` stay exact.
        try connection.query("""
            WITH own AS (
                SELECT id FROM comments WHERE user_id = \(userID) AND NOT (post_id = ANY(\(goneIDs)))
            ), withdrawn AS (
                DELETE FROM comments WHERE id IN (SELECT id FROM own) OR reply_to IN (SELECT id FROM own)
                RETURNING id, post_id, reply_to
            ), threads AS (
                SELECT reply_to AS id, count(*) AS n FROM withdrawn
                WHERE reply_to IS NOT NULL AND reply_to NOT IN (SELECT id FROM withdrawn) GROUP BY reply_to
            ), thread_upd AS (
                UPDATE comments c SET reply_count = c.reply_count - threads.n FROM threads WHERE c.id = threads.id
            ), counts AS (
                SELECT post_id, count(*) AS n FROM withdrawn GROUP BY post_id
            ), upd AS (
                UPDATE posts p SET comment_count = p.comment_count - counts.n FROM counts WHERE p.id = counts.post_id
                RETURNING p.id, p.parent_id, p.comment_count
            )
            \(ChangeLog.record(ChangeRecord(
                kind: .commentDeleted, postID: "upd.id", parentID: "upd.parent_id", userID: "\(userID)",
                data: [("comment_id", "withdrawn.id"), ("comment_count", "upd.comment_count"), ("reply_to", "withdrawn.reply_to")],
                source: "FROM withdrawn JOIN upd ON upd.id = withdrawn.post_id ORDER BY upd.id, withdrawn.id")))
            """)
    }

    /// Empties the posts that stay and gives them to the reserved user; their image files.
    /// Also a moderator's removal of a post with others' replies below (`userID`: who acts).
    static func bury(_ kept: Set<Int64>, by userID: Int64, on connection: PostgresConnection) throws -> [String?] {
        guard !kept.isEmpty else { return [] }
        let reserved = try ReservedUser.id(on: connection)
        let ids = PostgresArray(Array(kept))
        return try connection.query("""
            WITH old AS (SELECT id, image_url FROM posts WHERE id = ANY(\(ids))),
            p AS (
                UPDATE posts SET title = '[deleted]', summary = '', body = '', image_url = NULL, image_width = NULL,
                                 image_height = NULL, location_tag = NULL, timezone = 'UTC', ai_generated = false, deleted = true,
                                 mentions = NULL, user_id = \(reserved)
                WHERE id = ANY(\(ids)) RETURNING *
            ), recorded AS (\(ChangeLog.record(ChangeRecord(
                kind: .postUpdated, postID: "p.id", parentID: "p.parent_id", userID: "\(userID)",
                data: [("post", "\(unsafeSQL: PostShape.json)")],
                source: "FROM p \(unsafeSQL: PostShape.authorJoin) ORDER BY p.id"))))
            SELECT image_url FROM old
            """).rows.map { try $0.decode("image_url", as: String?.self) }
    }

    /// Deletes the posts that go, each topmost one with its subtree (all the account's),
    /// and records one `post.deleted` for each topmost one; their image files.
    private func removeSubtrees(of gone: Set<Int64>, posts: [Int64: Int64], by userID: Int64,
                                on connection: PostgresConnection) throws -> [String?] {
        let tops = gone.filter { !gone.contains(posts[$0] ?? 0) }.sorted()
        guard !tops.isEmpty else { return [] }
        let removed = try connection.query("""
            WITH RECURSIVE sub(id, top) AS (
                SELECT id, id FROM posts WHERE id = ANY(\(PostgresArray(tops)))
                UNION ALL
                SELECT c.id, sub.top FROM posts c JOIN sub ON c.parent_id = sub.id
            )
            DELETE FROM posts p USING sub WHERE p.id = sub.id RETURNING p.id, sub.top, p.image_url
            """).rows
        var ids: [Int64] = [], topOfID: [Int64] = [], files: [String?] = []
        for row in removed {
            ids.append(try row.decode("id"))
            topOfID.append(try row.decode("top"))
            files.append(try row.decode("image_url"))
        }
        try connection.query("""
            WITH removed AS (SELECT * FROM unnest(\(PostgresArray(ids)), \(PostgresArray(topOfID))) AS r(id, top)),
            grouped AS (SELECT top, array_agg(id ORDER BY id) AS ids FROM removed GROUP BY top),
            tops AS (SELECT * FROM unnest(\(PostgresArray(tops)), \(PostgresArray(tops.map { posts[$0] ?? 0 }))) AS t(id, parent)),
            counts AS (SELECT parent, count(*) AS n FROM tops WHERE parent <> 0 GROUP BY parent),
            parent AS (
                UPDATE posts p SET child_count = p.child_count - counts.n FROM counts WHERE p.id = counts.parent
                RETURNING p.id, p.child_count
            )
            \(ChangeLog.record(ChangeRecord(
                kind: .postDeleted, postID: "tops.id", parentID: "nullif(tops.parent, 0)", userID: "\(userID)",
                data: [("deleted_ids", "grouped.ids")],
                omittedWhenNull: ("parent_child_count", "parent.child_count"),
                source: "FROM tops JOIN grouped ON grouped.top = tops.id LEFT JOIN parent ON parent.id = tops.parent ORDER BY tops.id")))
            """)
        return files
    }

    /// The user row (its profile, tokens, keys, likes and comments go with it by cascade),
    /// its codes and messages, and the profile's change; its avatar's file.
    private func removeUser(_ userID: Int64, on connection: PostgresConnection) throws -> String? {
        // Its follows both ways, with the other sides' counters, before the cascade.
        try connection.query("""
            WITH \(FollowEdges.removal(where: "f.follower_id = \(userID) OR f.followee_id = \(userID)", by: "\(userID)"))
            SELECT 1
            """)
        try connection.query(ChangeLog.record(ChangeRecord(kind: .profileDeleted, userID: "\(userID)", data: [])))
        let row = try connection.query("""
            WITH gone AS (DELETE FROM users WHERE id = \(userID) RETURNING email),
            codes AS (DELETE FROM login_codes WHERE email = (SELECT email FROM gone)),
            mail AS (DELETE FROM outbox WHERE recipient = (SELECT email FROM gone))
            SELECT (SELECT avatar_url FROM profiles WHERE user_id = \(userID)) AS avatar_url
            """).firstRow()
        return try row.decode("avatar_url")
    }
}
