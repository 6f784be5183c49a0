import Postgres

/// The writes that change the tree's shape: deleting a subtree and moving a post. Each
/// locks the posts its work depends on first (`TreeLocks`), so that it races no other
/// write about them, and leaves the rest of the tree to everyone else.
extension PostService {
    /// Deletes the post and its whole subtree (likes and comments go with them by cascade);
    /// the parent's count drops by one.
    func delete(_ id: Int64, by caller: Caller) throws {
        try pool.withTransaction { connection in
            try deleteSubtree(id, by: caller, checkingOwner: true, on: connection)
        }
    }

    /// The delete in the caller's transaction, its images queued for deletion with it.
    /// `checkingOwner` false: a moderator's removal.
    func deleteSubtree(_ id: Int64, by caller: Caller, checkingOwner: Bool, on connection: PostgresConnection) throws {
        func check() throws -> OwnedPost {
            checkingOwner ? try owned(id, by: caller, on: connection) : try existing(id, on: connection)
        }
        _ = try check()
        // The subtree and its parent hold still: no child added or moved in or out, no
        // write about any of them, until we commit (see ChangeLog).
        try TreeLocks.lock(on: connection) {
            var covered = try TreeLocks.subtree(of: id, on: connection)
            if let parent = try Self.parent(of: id, on: connection) { covered.insert(parent) }
            return covered
        }
        // Read again under the locks: a delete of an ancestor may have won the race.
        let parentID = try check().parentID
        // The rows, their authors' `posts_count` (profiles in key order, as every lock), the
        // parent's count, and the event.
        let write = Write(
            locking: .held,
            steps: ["""
                subtree(id) AS (
                    SELECT \(id)::bigint
                    UNION ALL
                    SELECT child.id FROM posts child JOIN subtree ON child.parent_id = subtree.id
                )
                """, """
                gone AS (DELETE FROM posts p USING subtree WHERE p.id = subtree.id RETURNING p.id, p.image_url, p.user_id)
                """, """
                counted AS (
                    UPDATE profiles pr SET posts_count = pr.posts_count - n.n
                    FROM (SELECT user_id, count(*) AS n FROM gone GROUP BY user_id ORDER BY user_id) n WHERE pr.user_id = n.user_id
                )
                """,
                "parent AS (UPDATE posts SET child_count = child_count - 1 WHERE id = \(parentID) RETURNING child_count)",
            ],
            events: [(.postsDeleted, EventTable.postsDeleted.cte([
                "seq": "1", "post": "\(id)", "parent": "\(parentID)", "parent_child_count": "(SELECT child_count FROM parent)",
                "actor": "\(caller.userID)", "deleted_ids": "(SELECT array_agg(id ORDER BY id) FROM gone)",
            ], ""))],
            answer: "SELECT image_url FROM gone")
        let dropped = try effects.run(write, on: connection).rows.map { try $0.decode("image_url", as: String?.self) }
        try images.drop(dropped, on: connection)
    }

    /// Moves a post (and its subtree) under another parent, or to the root. A parent that is
    /// the post itself or one of its descendants is 409. The post, both parents and the new
    /// parent's ancestors are locked before the check: two moves that could together make
    /// a loop (A under B's descendant, B under A's) share a lock, so the second checks
    /// after the first has committed.
    func reparent(_ id: Int64, under newParent: Int64?, by caller: Caller) throws -> [UInt8] {
        try pool.withTransaction { connection -> [UInt8] in
            _ = try owned(id, by: caller, on: connection)
            if newParent == id { throw APIError.conflict("a post cannot be its own parent") }
            try TreeLocks.lock(on: connection) {
                var covered: Set<Int64> = [id]
                if let parent = try Self.parent(of: id, on: connection) { covered.insert(parent) }
                if let newParent { covered.formUnion(try TreeLocks.chain(from: newParent, on: connection)) }
                return covered
            }
            let oldParent = try lockOwned(id, by: caller, on: connection).parentID
            if let newParent {
                let chain = try TreeLocks.chain(from: newParent, on: connection)
                // Moving a post under another is posting under it: the policy's `reparent`.
                let target = try connection.query("""
                    SELECT deleted, \(Visibility.blocked(author: "user_id", from: caller)) AS blocked
                    FROM posts WHERE id = \(newParent)\(Visibility.actable(author: "posts.user_id"))
                    """).first
                try Visibility.check(.reparent, Visibility.Target(found: target != nil && !chain.isEmpty,
                                                                  tombstone: try target?.decode("deleted") ?? false))
                if chain.contains(id) { throw APIError.conflict("the new parent is inside this post's own subtree") }
                try Visibility.check(.reparent, Visibility.Target(found: true, blocked: try target?.decode("blocked") ?? false))
            }
            // The parents' counts move only when the parent changes.
            let write = Write(
                locking: .held,
                steps: ["""
                    counts AS (
                        UPDATE posts SET child_count = child_count + (CASE WHEN id = \(newParent) THEN 1 ELSE -1 END)
                        WHERE (id = \(oldParent) OR id = \(newParent)) AND \(oldParent)::bigint IS DISTINCT FROM \(newParent)::bigint
                    )
                    """,
                    "p AS (UPDATE posts SET parent_id = \(newParent) WHERE id = \(id) RETURNING *)",
                ],
                events: [(.postUpdated, EventTable.postUpdated.cte([
                    "seq": "1", "post": "p.id", "parent": "p.parent_id", "actor": "\(caller.userID)",
                    "json": "\(unsafeSQL: PostShape.json)", "moved": "true", "old_parent": "\(oldParent)",
                    "mentions_added": "NULL", "mentions_removed": "NULL",
                ], "FROM p \(unsafeSQL: PostShape.authorJoin)"))],
                answer: """
                    SELECT \(unsafeSQL: PostShape.columns)\(PostShape.likedByMe(caller: caller)) FROM p \(unsafeSQL: PostShape.authorJoin)
                    """)
            guard let post = try Self.single(effects.run(write, on: connection, committing: true), withLiked: true) else {
                throw APIError.notFound("no such post")
            }
            return post
        }
    }

    /// The post's parent as it is now (nil for a root, or no such post).
    static func parent(of id: Int64, on connection: PostgresConnection) throws -> Int64? {
        try connection.query("SELECT parent_id FROM posts WHERE id = \(id)").first?.decode("parent_id", as: Int64?.self)
    }
}
