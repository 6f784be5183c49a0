import Postgres

/// The posts SQL: pages, single posts, children, ancestors (reads, here) and every write
/// (`PostService+Writes`). Each read is one prepared statement; a page is a keyset scan of
/// one of the (…, created_at DESC, id DESC) indexes, so it costs the same at any depth.
struct PostService: Sendable {
    var pool: ConnectionPool
    let effects: EventEffects
    let images: ImageStore

    /// A page of posts already written as a JSON array, with the cursor that continues it.
    struct Page: Sendable {
        let json: [UInt8]
        let count: Int
        let nextCursor: KeysetCursor?
    }

    enum ParentFilter: Sendable, Equatable {
        case any
        case root
        case post(Int64)
    }

    /// Newest first, optionally under one parent (or at the root) and by one author.
    func page(parent: ParentFilter = .any, author: Int64? = nil, _ request: PageRequest<KeysetCursor>, caller: Caller?) throws -> Page {
        var query: SQLQuery = "SELECT \(unsafeSQL: PostShape.columns)\(PostShape.likedByMe(caller: caller)) FROM posts p \(unsafeSQL: PostShape.authorJoin) WHERE true"
        switch parent {
        case .any: break
        case .root: query.append(" AND p.parent_id IS NULL")
        case .post(let id):
            // As /children does: the parent itself must be one the caller may see.
            query.append(" AND p.parent_id = \(id) AND EXISTS (SELECT 1 FROM posts parent WHERE parent.id = \(id)")
            query.append(Visibility.visible(on: .postRead, author: "parent.user_id", to: caller))
            query.append(")")
        }
        if let author { query.append(" AND p.user_id = \(author)") }
        query.append(Visibility.visible(on: .postList, author: "p.user_id", to: caller, suspendedFlag: "pr.suspended"))
        if let cursor = request.cursor { query.append(cursor.before(created: "p.created_at", id: "p.id")) }
        query.append(" ORDER BY p.created_at DESC, p.id DESC LIMIT \(literal: request.limit + 1)")
        return try pool.withReadConnection { try Self.page(from: $0.query(query), limit: request.limit, withLiked: caller != nil) }
    }

    /// The children page of a post, or nil when the post does not exist (or its author and
    /// the caller blocked one another): one statement, the parent's existence and its page
    /// together (a post with no children is common).
    func children(of postID: Int64, _ request: PageRequest<KeysetCursor>, caller: Caller?) throws -> Page? {
        var page: SQLQuery = "SELECT \(unsafeSQL: PostShape.columns)\(PostShape.likedByMe(caller: caller)) FROM posts p \(unsafeSQL: PostShape.authorJoin) WHERE p.parent_id = parent.id"
        page.append(Visibility.visible(on: .postList, author: "p.user_id", to: caller, suspendedFlag: "pr.suspended"))
        if let cursor = request.cursor { page.append(cursor.before(created: "p.created_at", id: "p.id")) }
        page.append(" ORDER BY p.created_at DESC, p.id DESC LIMIT \(literal: request.limit + 1)")
        let query: SQLQuery = """
            SELECT c.* FROM (
                SELECT id FROM posts WHERE id = \(postID)\(Visibility.visible(on: .postRead, author: "posts.user_id", to: caller))
            ) parent
            LEFT JOIN LATERAL (\(page)) c ON true
            """
        return try pool.withReadConnection { connection -> Page? in
            let result = try connection.query(query)
            guard result.rowCount > 0 else { return nil }
            // One row of NULLs: the parent exists and has no children (on this page).
            if result.rowCount == 1, try result.first?.isNull("id") == true {
                return Page(json: Array("[]".utf8), count: 0, nextCursor: nil)
            }
            return try Self.page(from: result, limit: request.limit, withLiked: caller != nil)
        }
    }

    /// One post as JSON, or nil.
    func post(_ id: Int64, caller: Caller?) throws -> [UInt8]? {
        try pool.withReadConnection { try Self.post(id, caller: caller, on: $0) }
    }

    static func post(_ id: Int64, caller: Caller?, on connection: PostgresConnection) throws -> [UInt8]? {
        try single(connection.query("""
            SELECT \(unsafeSQL: PostShape.columns)\(PostShape.likedByMe(caller: caller))
            FROM posts p \(unsafeSQL: PostShape.authorJoin)
            WHERE p.id = \(id)\(Visibility.visible(on: .postRead, author: "p.user_id", to: caller, suspendedFlag: "pr.suspended"))
            """), withLiked: caller != nil)
    }

    /// The post's ancestors, root first, the post itself left out; nil when it does not exist.
    /// With blocks in play, nil when the caller may not see the post, and ancestors it may
    /// not see are left out of the chain.
    func ancestors(of id: Int64, caller: Caller?) throws -> [UInt8]? {
        try pool.withReadConnection { connection -> [UInt8]? in
            let result = try connection.query("""
                WITH RECURSIVE chain(id, parent_id, depth) AS (
                    SELECT id, parent_id, 0 FROM posts WHERE id = \(id)
                    UNION ALL
                    SELECT up.id, up.parent_id, chain.depth + 1 FROM posts up JOIN chain ON up.id = chain.parent_id
                    WHERE chain.depth < 100000
                )
                SELECT \(unsafeSQL: PostShape.columns)\(PostShape.likedByMe(caller: caller)), chain.depth
                FROM chain JOIN posts p ON p.id = chain.id \(unsafeSQL: PostShape.authorJoin)
                WHERE true\(Visibility.visible(on: .postRead, author: "p.user_id", to: caller, suspendedFlag: "pr.suspended"))
                ORDER BY chain.depth DESC
                """)
            // The post itself is the last row (depth 0), unless it is hidden.
            let rows = result.rows
            guard let last = rows.last, try last.decode("depth", as: Int32.self) == 0 else { return nil }
            var out: [UInt8] = []
            try PostShape.appendArray(rows.dropLast(), withLiked: caller != nil, to: &out)
            return out
        }
    }

    static func single(_ result: PostgresResult, withLiked: Bool) throws -> [UInt8]? {
        guard let row = result.first else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        try PostShape.append(row, withLiked: withLiked, to: &out)
        return out
    }

    static func page(from result: PostgresResult, limit: Int, withLiked: Bool) throws -> Page {
        let rows = result.rows
        let shown = rows.prefix(limit)
        var json: [UInt8] = []
        json.reserveCapacity(shown.count * 1200 + 2)
        try PostShape.appendArray(shown, withLiked: withLiked, to: &json)
        // Asked for one more than the page: a next cursor only when something follows.
        let next = try rows.count > limit ? shown.last.map(PostShape.cursor(after:)) : nil
        return Page(json: json, count: shown.count, nextCursor: next)
    }
}
