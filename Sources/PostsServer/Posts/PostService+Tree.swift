import Postgres

/// The writes that change the tree's shape: deleting a subtree and moving a post. Each
/// locks the posts its work depends on first (`TreeLocks`), so that it races no other
/// write about them, and leaves the rest of the tree to everyone else.
extension PostService {
    /// Deletes the post and its whole subtree (likes and comments go with them by cascade);
    /// the parent's count drops by one.
    func delete(_ id: Int64, by caller: Caller) throws {
        try writes.run { connection in
            let deleted = try deleteSubtree(id, by: caller, checkingOwner: true, on: connection)
            try images.drop(deleted.images, on: connection)
            return Written((), deleted.events)
        }
    }

    /// What a subtree's deletion did: its events, and the images it no longer names (to
    /// queue for deletion in the same transaction).
    struct SubtreeDeleted {
        let events: [DomainEvent]
        let images: [String?]
    }

    /// The delete in the caller's transaction. `checkingOwner` false: a moderator's removal.
    func deleteSubtree(_ id: Int64, by caller: Caller, checkingOwner: Bool,
                       on connection: PostgresConnection) throws -> SubtreeDeleted {
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
        // The rows, and their authors' `posts_count` (profiles in key order, as every lock).
        let subtree = try connection.query("""
            WITH RECURSIVE subtree(id) AS (
                SELECT \(id)::bigint
                UNION ALL
                SELECT child.id FROM posts child JOIN subtree ON child.parent_id = subtree.id
            ), gone AS (
                DELETE FROM posts p USING subtree WHERE p.id = subtree.id RETURNING p.id, p.image_url, p.user_id
            ), counted AS (
                UPDATE profiles pr SET posts_count = pr.posts_count - n.n
                FROM (SELECT user_id, count(*) AS n FROM gone GROUP BY user_id ORDER BY user_id) n WHERE pr.user_id = n.user_id
            )
            SELECT id, image_url FROM gone ORDER BY id
            """).rows
        let ids: [Int64] = try subtree.map { try $0.decode("id") }
        let parentCount = try connection.query("""
            UPDATE posts SET child_count = child_count - 1 WHERE id = \(parentID) RETURNING child_count
            """).first.map { Int(try $0.decode("child_count", as: Int32.self)) }
        return SubtreeDeleted(
            events: [.postsDeleted(PostsDeleted(post: id, parent: parentID, parentChildCount: parentCount, actor: caller.userID,
                                                deletedIDs: ids))],
            images: try subtree.map { try $0.decode("image_url", as: String?.self) })
    }

    /// Moves a post (and its subtree) under another parent, or to the root. A parent that is
    /// the post itself or one of its descendants is 409. The post, both parents and the new
    /// parent's ancestors are locked before the check: two moves that could together make
    /// a loop (A under B's descendant, B under A's) share a lock, so the second checks
    /// after the first has committed.
    func reparent(_ id: Int64, under newParent: Int64?, by caller: Caller) throws -> [UInt8] {
        try writes.run { connection -> Written<[UInt8]> in
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
                guard !chain.isEmpty else { throw APIError.notFound("no such parent post") }
                if try Self.isTombstone(newParent, on: connection) { throw Self.tombstoneGone }
                if chain.contains(id) { throw APIError.conflict("the new parent is inside this post's own subtree") }
                // Moving a post under the other side of a block is posting under it (403);
                // a suspended user's post cannot be read, nor posted under (404).
                let author = try connection.query("""
                    SELECT user_id, EXISTS (SELECT 1 FROM posts WHERE id = \(newParent)\(Visibility.notSuspended( "posts.user_id"))) AS active
                    FROM posts WHERE id = \(newParent)
                    """).firstRow()
                guard try author.decode("active", as: Bool.self) else { throw APIError.notFound("no such parent post") }
                try Visibility.checkInteraction(with: try author.decode("user_id", as: Int64.self), by: caller)
            }
            if oldParent != newParent {
                try connection.query("""
                    UPDATE posts SET child_count = child_count + (CASE WHEN id = \(newParent) THEN 1 ELSE -1 END)
                    WHERE id = \(oldParent) OR id = \(newParent)
                    """)
                try connection.query("UPDATE posts SET parent_id = \(newParent) WHERE id = \(id)")
            }
            let row = try connection.query("""
                SELECT \(unsafeSQL: PostShape.columns)\(PostShape.likedByMe(caller: caller))
                FROM posts p \(unsafeSQL: PostShape.authorJoin) WHERE p.id = \(id)
                """).firstRow()
            var post: [UInt8] = []
            try PostShape.append(row, withLiked: false, to: &post)
            var answer: [UInt8] = []
            try PostShape.append(row, withLiked: true, to: &answer)
            return Written(answer, [.postUpdated(PostUpdated(post: id, parent: newParent, actor: caller.userID, json: post,
                                                             movedFrom: .some(oldParent)))])
        }
    }

    /// The post's parent as it is now (nil for a root, or no such post).
    static func parent(of id: Int64, on connection: PostgresConnection) throws -> Int64? {
        try connection.query("SELECT parent_id FROM posts WHERE id = \(id)").first?.decode("parent_id", as: Int64?.self)
    }
}
