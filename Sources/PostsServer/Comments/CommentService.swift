import Foundation
import Postgres

/// Comments: a post's page of top-level comments (or of every comment, `all`), a comment's
/// page of replies, each comment with its author's whole profile (one JOIN), and the writes
/// (`CommentService+Writes`), each keeping the counters in the same statement.
struct CommentService: Sendable {
    var pool: ConnectionPool
    let effects: EventEffects
    /// Plain comments of concurrent requests, one statement a batch (`CommentBatch`).
    let coalescer: WriteCoalescer<CommentBatch>

    static let maxLength = 2200

    struct Page: Sendable {
        /// The post's `comment_count`, or the comment's `reply_count` for a replies page.
        let count: Int
        let json: [UInt8]
        let nextCursor: CommentCursor?
    }

    /// Oldest first: the top-level comments, or with `all` every comment, replies included
    /// (the flat list of old); nil when there is no such post (or the caller and its author
    /// blocked one another). Comments of users the caller blocked, was blocked by or muted
    /// are left out.
    func page(of postID: Int64, all: Bool = false, _ request: PageRequest<CommentCursor>, caller: Caller?) throws -> Page? {
        var page: SQLQuery = """
            SELECT \(unsafeSQL: CommentShape.columns)\(CommentShape.likedByMe(caller: caller))
            FROM comments c \(unsafeSQL: CommentShape.authorJoin)
            WHERE c.post_id = post.id
            """
        // The top-level ones by their own partial index: a page costs the same however many
        // replies the post has.
        if !all { page.append(" AND c.reply_to IS NULL") }
        let query: SQLQuery = """
            SELECT page.*, post.comment_count AS page_count
            FROM (
                SELECT id, comment_count FROM posts
                WHERE id = \(postID)\(Visibility.visible(on: .postRead, author: "posts.user_id", to: caller))
            ) post
            LEFT JOIN LATERAL (\(Self.finish(page, request, caller: caller))) page ON true
            ORDER BY page.created_at, page.id
            """
        return try run(query, request, caller: caller)
    }

    /// A comment's replies, oldest first; nil when there is no such comment, or the caller
    /// may not see it (its author's or its post's author's block, a suspended author).
    func replies(of commentID: UUID, _ request: PageRequest<CommentCursor>, caller: Caller?) throws -> Page? {
        let page: SQLQuery = """
            SELECT \(unsafeSQL: CommentShape.columns)\(CommentShape.likedByMe(caller: caller))
            FROM comments c \(unsafeSQL: CommentShape.authorJoin)
            WHERE c.reply_to = parent.id
            """
        let query: SQLQuery = """
            SELECT page.*, parent.reply_count AS page_count
            FROM (
                SELECT top.id, top.reply_count FROM comments top JOIN posts p ON p.id = top.post_id
                WHERE top.id = \(commentID)\(Visibility.visible(on: .commentRead, author: "top.user_id", to: caller))\
            \(Visibility.visible(on: .postRead, author: "p.user_id", to: caller))
            ) parent
            LEFT JOIN LATERAL (\(Self.finish(page, request, caller: caller))) page ON true
            ORDER BY page.created_at, page.id
            """
        return try run(query, request, caller: caller)
    }

    /// What every page adds to its own rows: visibility, the cursor, order and limit.
    private static func finish(_ page: SQLQuery, _ request: PageRequest<CommentCursor>, caller: Caller?) -> SQLQuery {
        var page = page
        page.append(Visibility.visible(on: .commentList, author: "c.user_id", to: caller, suspendedFlag: "pr.suspended"))
        if let cursor = request.cursor { page.append(cursor.after) }
        page.append(" ORDER BY c.created_at, c.id LIMIT \(literal: request.limit + 1)")
        return page
    }

    /// The rows of a page query whose first row always exists when its subject does (one
    /// row of NULL comment columns when the page is empty).
    private func run(_ query: SQLQuery, _ request: PageRequest<CommentCursor>, caller: Caller?) throws -> Page? {
        try pool.withReadConnection { connection -> Page? in
            let rows = try connection.query(query).rows
            guard let first = rows.first else { return nil }
            let id = try first.position(of: "id")
            let comments = rows.filter { $0.withBytes(at: id) { $0 != nil } }
            let (json, last) = try RowJSON.page(comments, limit: request.limit) { row, out in
                try CommentShape.append(row, withLiked: caller != nil, to: &out)
            }
            let next = try last.map(CommentShape.cursor(after:))
            return Page(count: try first.decode("page_count"), json: json, nextCursor: next)
        }
    }
}
