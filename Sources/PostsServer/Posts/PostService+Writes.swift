import HTTP
import Postgres

/// Every write to posts, each in one transaction that keeps `child_count` exact. Image files
/// are kept (renamed into place) before the commit and removed again if it fails; files of
/// posts that are deleted or replaced go after the commit.
extension PostService {
    /// Creates a post; answers 201 with it, or the first answer again for a retried key.
    func create(_ draft: PostDraft, by caller: Caller, idempotency: IdempotentRequest?) throws -> Response {
        let stored = try draft.image.map(images.keep)
        do {
            let (response, replayed) = try pool.withTransaction { connection -> (Response, Bool) in
                if let replay = try idempotency?.replay(on: connection) { return (replay, true) }
                let post = try insert(draft, imageURL: stored?.url, by: caller, on: connection)
                var answer = JSONObject.success()
                answer.addRaw("post", post)
                let response = answer.response(status: .created)
                try idempotency?.record(response, on: connection)
                return (response, false)
            }
            // The first request made the post: this one's image is not needed.
            if replayed { images.remove(url: stored?.url) }
            return response
        } catch {
            images.remove(url: stored?.url)
            throw error
        }
    }

    /// The parent's count and the new row in one statement: no parent row, no post (404).
    private func insert(_ draft: PostDraft, imageURL: String?, by caller: Caller,
                        on connection: PostgresConnection) throws -> [UInt8] {
        let parentID: Int64? = draft.parentID
        let locationTag: String? = draft.locationTag
        // The parent's lock before any write (its count is in the change: see ChangeLog).
        let query: SQLQuery = """
            WITH lock AS (\(ChangeLog.lock(posts: [parentID]))),
            parent AS (
                UPDATE posts SET child_count = child_count + 1 WHERE id = \(parentID) AND (SELECT count(*) FROM lock) >= 0
                RETURNING id, child_count
            ), p AS (
                INSERT INTO posts (user_id, parent_id, title, summary, body, image_url, timezone, location_tag, ai_generated)
                SELECT \(caller.userID), \(parentID)::bigint, \(draft.title), \(draft.summary), \(draft.body),
                       \(imageURL)::text, \(draft.timezone), \(locationTag)::text, \(draft.aiGenerated)
                WHERE (\(parentID)::bigint IS NULL OR EXISTS (SELECT 1 FROM parent)) AND (SELECT count(*) FROM lock) >= 0
                RETURNING *
            ), recorded AS (
                INSERT INTO changes (type, post_id, parent_id, user_id, data)
                SELECT 'post.created', p.id, p.parent_id, p.user_id, CASE WHEN p.parent_id IS NULL
                    THEN json_build_object('post', post_json(p::posts, a.username))
                    ELSE json_build_object('post', post_json(p::posts, a.username), 'parent_child_count', (SELECT child_count FROM parent))
                END FROM p LEFT JOIN profiles a ON a.user_id = p.user_id
            )
            SELECT \(unsafeSQL: PostRows.columns), false AS liked_by_me FROM p \(unsafeSQL: PostRows.authorJoin)
            """
        guard let post = try Self.single(Self.insertingUnderParent(query, on: connection), withLiked: true) else {
            throw HTTPError.notFound("no such parent post")
        }
        return post
    }

    /// The insert, where a parent deleted between our update of it and the insert's own
    /// check shows as a foreign-key violation: that too is "no such parent".
    private static func insertingUnderParent(_ query: SQLQuery, on connection: PostgresConnection) throws -> PostgresResult {
        do {
            return try connection.query(query)
        } catch where error.sqlState == .foreignKeyViolation {
            throw HTTPError.notFound("no such parent post")
        }
    }

    /// Changes what the edits name; only the author may (403), and only an existing post (404).
    func update(_ id: Int64, with edits: PostEdits, by caller: Caller) throws -> [UInt8] {
        let stored = try edits.image.map(images.keep)
        do {
            let (post, replaced) = try pool.withTransaction { connection -> ([UInt8], String?) in
                try connection.query(ChangeLog.lock(posts: [id]))
                let previous = try lockOwned(id, by: caller, on: connection).imageURL
                let title: String? = edits.title
                let summary: String? = edits.summary
                let body: String? = edits.body
                let changesLocation: Bool = edits.locationTag != nil
                let location: String? = edits.locationTag.flatMap { $0 }
                let imageURL: String? = stored?.url
                let query: SQLQuery = """
                    WITH p AS (
                        UPDATE posts SET
                            title = coalesce(\(title)::text, title),
                            summary = coalesce(\(summary)::text, summary),
                            body = coalesce(\(body)::text, body),
                            location_tag = CASE WHEN \(changesLocation) THEN \(location)::text ELSE location_tag END,
                            image_url = coalesce(\(imageURL)::text, image_url)
                        WHERE id = \(id) RETURNING *
                    ), recorded AS (
                        INSERT INTO changes (type, post_id, parent_id, user_id, data)
                        SELECT 'post.updated', p.id, p.parent_id, \(caller.userID),
                               json_build_object('post', post_json(p::posts, a.username))
                        FROM p LEFT JOIN profiles a ON a.user_id = p.user_id
                    )
                    SELECT \(unsafeSQL: PostRows.columns)\(PostRows.likedByMe(caller: caller)) FROM p \(unsafeSQL: PostRows.authorJoin)
                    """
                let post = try Self.single(connection.query(query), withLiked: true) ?? []
                return (post, stored == nil ? nil : previous)
            }
            images.remove(url: replaced)
            return post
        } catch {
            images.remove(url: stored?.url)
            throw error
        }
    }

    /// Deletes the post and its whole subtree (likes and comments go with them by cascade);
    /// the parent's count drops by one. Returns the ids deleted.
    @discardableResult
    func delete(_ id: Int64, by caller: Caller) throws -> [Int64] {
        let (deleted, files) = try pool.withTransaction { connection -> ([Int64], [String]) in
            // The tree holds still (no reparent, and no write about any post, meanwhile), then
            // the post's and its parent's locks come before any write (see ChangeLog).
            try connection.query(ChangeLog.lockTree)
            let parentID = try owned(id, by: caller, on: connection).parentID
            try connection.query(ChangeLog.lock(posts: [id, parentID]))
            let subtree = try connection.query("""
                WITH RECURSIVE subtree(id) AS (
                    SELECT \(id)::bigint
                    UNION ALL
                    SELECT child.id FROM posts child JOIN subtree ON child.parent_id = subtree.id
                )
                DELETE FROM posts p USING subtree WHERE p.id = subtree.id RETURNING p.id, p.image_url
                """).rows
            let ids: [Int64] = try subtree.map { try $0.decode("id") }
            try connection.query("""
                WITH parent AS (
                    UPDATE posts SET child_count = child_count - 1 WHERE id = \(parentID) RETURNING child_count
                )
                INSERT INTO changes (type, post_id, parent_id, user_id, data)
                SELECT 'post.deleted', \(id), \(parentID)::bigint, \(caller.userID), CASE WHEN \(parentID)::bigint IS NULL
                    THEN json_build_object('deleted_ids', \(PostgresArray(ids)))
                    ELSE json_build_object('deleted_ids', \(PostgresArray(ids)), 'parent_child_count', (SELECT child_count FROM parent))
                END
                """)
            return (ids, try subtree.compactMap { try $0.decode("image_url", as: String?.self) })
        }
        for url in files { images.remove(url: url) }
        return deleted
    }

    /// Moves a post (and its subtree) under another parent, or to the root. A parent that is
    /// the post itself or one of its descendants is 409. Reparents run one at a time (a
    /// transaction-scoped advisory lock): two opposite moves checked at once could each
    /// pass the cycle check and together make a loop.
    func reparent(_ id: Int64, under newParent: Int64?, by caller: Caller) throws -> [UInt8] {
        try pool.withTransaction { connection -> [UInt8] in
            try connection.query(ChangeLog.lockTree)
            // The post's and both parents' locks before any write (see ChangeLog).
            let oldParent = try owned(id, by: caller, on: connection).parentID
            try connection.query(ChangeLog.lock(posts: [id, oldParent, newParent]))
            let post = try lockOwned(id, by: caller, on: connection)
            if let newParent {
                guard newParent != id else { throw HTTPError(.conflict, message: "a post cannot be its own parent") }
                let path = try connection.query("""
                    WITH RECURSIVE up(id, parent_id, depth) AS (
                        SELECT id, parent_id, 0 FROM posts WHERE id = \(newParent)
                        UNION ALL
                        SELECT p.id, p.parent_id, up.depth + 1 FROM posts p JOIN up ON p.id = up.parent_id
                        WHERE up.depth < 100000
                    )
                    SELECT count(*) > 0 AS found, bool_or(id = \(id)) AS cycle FROM up
                    """).first!
                guard try path.decode("found", as: Bool.self) else { throw HTTPError.notFound("no such parent post") }
                if try path.decode("cycle", as: Bool?.self) == true {
                    throw HTTPError(.conflict, message: "the new parent is inside this post's own subtree")
                }
            }
            if post.parentID != newParent {
                try connection.query("""
                    UPDATE posts SET child_count = child_count + (CASE WHEN id = \(newParent) THEN 1 ELSE -1 END)
                    WHERE id = \(oldParent) OR id = \(newParent)
                    """)
                try connection.query("UPDATE posts SET parent_id = \(newParent) WHERE id = \(id)")
            }
            try connection.query("""
                INSERT INTO changes (type, post_id, parent_id, old_parent_id, reparented, user_id, data)
                SELECT 'post.updated', p.id, p.parent_id, \(oldParent)::bigint, true, \(caller.userID),
                       json_build_object('post', post_json(p, a.username), 'old_parent_id', \(oldParent)::bigint)
                FROM posts p LEFT JOIN profiles a ON a.user_id = p.user_id WHERE p.id = \(id)
                """)
            return try Self.post(id, caller: caller, on: connection) ?? []
        }
    }

    /// The post, read without a lock (no write, so no xid yet: see ChangeLog): 404 if there
    /// is none, 403 if it is another's.
    func owned(_ id: Int64, by caller: Caller, on connection: PostgresConnection) throws -> OwnedPost {
        try checkOwner(connection.query("SELECT user_id, parent_id, image_url FROM posts WHERE id = \(id)").first, caller)
    }

    struct OwnedPost {
        let parentID: Int64?
        let imageURL: String?
    }

    /// Locks the post for this transaction: 404 if there is none, 403 if it is another's.
    func lockOwned(_ id: Int64, by caller: Caller, on connection: PostgresConnection) throws -> OwnedPost {
        try checkOwner(connection.query("SELECT user_id, parent_id, image_url FROM posts WHERE id = \(id) FOR UPDATE").first,
                       caller)
    }

    private func checkOwner(_ row: PostgresRow?, _ caller: Caller) throws -> OwnedPost {
        guard let row else { throw HTTPError.notFound("no such post") }
        guard try row.decode("user_id", as: Int64.self) == caller.userID else {
            throw HTTPError(.forbidden, message: "only the post's author may change it")
        }
        return OwnedPost(parentID: try row.decode("parent_id"), imageURL: try row.decode("image_url"))
    }
}
