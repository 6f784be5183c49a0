import Postgres

/// Likes: like, unlike and toggle, and the page of a post's likers. Every write goes
/// through `LikeBatch`, the one place a like changes: one statement over a batch of
/// requests' likes (data-modifying CTEs change the like rows and the posts' counters
/// together, after the posts' locks) that says what happened (`like_changed`) and records
/// what follows from it (`EventEffects`). Concurrent requests share a statement
/// (`WriteCoalescer`); an idle server runs each alone, as a batch of one.
struct LikeService: Sendable {
    var pool: ConnectionPool
    let effects: EventEffects
    let coalescer: WriteCoalescer<LikeBatch>

    init(pool: ConnectionPool, effects: EventEffects, coalescer: WriteCoalescer<LikeBatch>) {
        self.pool = pool
        self.effects = effects
        self.coalescer = coalescer
    }

    enum Action: String, Sendable {
        case like
        case unlike
        case toggle
    }

    struct State: Sendable {
        let liked: Bool
        let likeCount: Int
        /// False for a repeat that changed nothing (liking a liked post).
        let changed: Bool
    }

    /// The post's like state after the action: 404 when there is no such post (or it cannot
    /// be read), 410 to like a tombstone, 403 to like across a block (`Visibility.check`).
    /// `connection`: in the caller's transaction (federation's inbox), else in a batch.
    func apply(_ action: Action, post postID: Int64, by caller: Caller, on connection: PostgresConnection? = nil) throws -> State {
        let like = LikeBatch.Like(action: action, post: postID, caller: caller, precondition: pool.session.precondition)
        let batch = LikeBatch(pool: pool, effects: effects)
        if let connection { return try batch.run([like], on: connection)[0].get() }
        return try coalescer.submit(like, running: batch)
    }

    struct Likers: Sendable {
        let likeCount: Int
        let profilesJSON: [UInt8]
        let nextCursor: KeysetCursor?
    }

    /// The post's likers' profiles, newest like first; nil when there is no such post (or
    /// the caller may not read it). Likers the caller may not see (`Visibility.Surface.likers`)
    /// are left out (the count stays global).
    func likers(of postID: Int64, _ request: PageRequest<KeysetCursor>, caller: Caller?) throws -> Likers? {
        var page: SQLQuery = "SELECT l.created_at, l.user_id FROM likes l WHERE l.post_id = post.id"
        page.append(Visibility.visible(on: .likers, author: "l.user_id", to: caller))
        if let cursor = request.cursor { page.append(cursor.before(created: "l.created_at", id: "l.user_id")) }
        page.append(" ORDER BY l.created_at DESC, l.user_id DESC LIMIT \(literal: request.limit + 1)")
        let query: SQLQuery = """
            SELECT post.like_count, l.created_at AS liked_at, \(unsafeSQL: ProfileShape.columns)
            FROM (
                SELECT id, like_count FROM posts
                WHERE id = \(postID)\(Visibility.visible(on: .postRead, author: "posts.user_id", to: caller))
            ) post
            LEFT JOIN LATERAL (\(page)) l ON true
            LEFT JOIN profiles pr ON pr.user_id = l.user_id
            ORDER BY l.created_at DESC, l.user_id DESC
            """
        return try pool.withReadConnection { connection -> Likers? in
            let rows = try connection.query(query).rows
            guard let first = rows.first else { return nil }
            let likers = try rows.filter { try !$0.isNull("user_id") }
            let profile = try first.position(of: "user_id")
            let (json, last) = try RowJSON.page(likers, limit: request.limit) { row, out in
                try ProfileShape.append(row, from: profile, to: &out)
            }
            let next = try last.map { KeysetCursor(createdAt: try $0.decode("liked_at"), id: try $0.decode("user_id")) }
            return Likers(likeCount: try first.decode("like_count"), profilesJSON: json, nextCursor: next)
        }
    }
}
