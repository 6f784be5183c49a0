import Locking
import Postgres

/// A tag, its page of posts (newest first) and the trending list.
///
/// Trending: the tags used (in posts and comments) by the most distinct authors in the
/// last 24 hours, suspended authors left out. Counting a day of `post_tags` and
/// `comment_tags` (their `created_at` indexes) costs what a day of tagging wrote, so an
/// instance counts at most once a minute and every request in between reads the list it
/// kept (`maxAge`); moving the server clock drops it. A minute late is what trending can
/// afford; a scan per request is not.
struct TagService: Sendable {
    var pool: ConnectionPool
    let clock: ServerClock

    static let maxAge: Duration = .seconds(60)
    static let maxListed = 100

    private struct Kept: Sendable {
        var tags: [TrendingTag]
        var at: ContinuousClock.Instant
    }

    /// Shared by every copy (a request's: `serving(_:)`).
    private let kept = ParkingLock<Kept?>(nil)

    init(pool: ConnectionPool, clock: ServerClock) {
        self.pool = pool
        self.clock = clock
        clock.onAdvance { [kept] in kept.withLock { $0 = nil } }
    }

    /// Drops the trending list kept (a restored snapshot).
    func forget() {
        kept.withLock { $0 = nil }
    }

    /// `{"name","posts_count"}` of the tag a name (folded as written) names; nil for none.
    func tag(_ name: String) throws -> [UInt8]? {
        try pool.withReadConnection { connection -> [UInt8]? in
            guard let row = try connection.query("""
                SELECT name, posts_count FROM tags WHERE name = search_fold(\(Self.bare(name)))
                """).first else { return nil }
            var out: [UInt8] = []
            try TagShape.append(row, to: &out)
            return out
        }
    }

    /// The tag's posts, newest first, through the visibility policy; nil for no such tag.
    func posts(_ name: String, _ request: PageRequest<KeysetCursor>, caller: Caller?) throws -> PostService.Page? {
        var page: SQLQuery = """
            SELECT \(unsafeSQL: PostShape.columns)\(PostShape.likedByMe(caller: caller))
            FROM post_tags pt JOIN posts p ON p.id = pt.post_id \(unsafeSQL: PostShape.authorJoin)
            WHERE pt.tag_id = t.id AND NOT p.deleted
            """
        page.append(Visibility.visible(on: .search, author: "p.user_id", to: caller, suspendedFlag: "pr.suspended"))
        if let cursor = request.cursor { page.append(cursor.before(created: "pt.created_at", id: "pt.post_id")) }
        page.append(" ORDER BY pt.created_at DESC, pt.post_id DESC LIMIT \(literal: request.limit + 1)")
        let query: SQLQuery = """
            SELECT x.* FROM (SELECT id FROM tags WHERE name = search_fold(\(Self.bare(name)))) t
            LEFT JOIN LATERAL (\(page)) x ON true
            """
        return try pool.withReadConnection { connection -> PostService.Page? in
            let result = try connection.query(query)
            guard result.rowCount > 0 else { return nil }
            if result.rowCount == 1, try result.first?.isNull("id") == true {
                return PostService.Page(json: Array("[]".utf8), count: 0, nextCursor: nil)
            }
            return try PostService.page(from: result, limit: request.limit, withLiked: caller != nil)
        }
    }

    /// The trending tags, at most `limit`.
    func trending(limit: Int) throws -> [TrendingTag] {
        let now = ContinuousClock.now
        if let kept = kept.withLock({ $0 }), now - kept.at < Self.maxAge { return Array(kept.tags.prefix(limit)) }
        let tags = try count()
        kept.withLock { $0 = Kept(tags: tags, at: now) }
        return Array(tags.prefix(limit))
    }

    private func count() throws -> [TrendingTag] {
        let since: SQLQuery = "\(clock.now) - interval '24 hours'"
        var used: SQLQuery = "SELECT tag_id, author_id FROM post_tags WHERE created_at > \(since)"
        used.append(" UNION ALL SELECT tag_id, author_id FROM comment_tags WHERE created_at > \(since)")
        var authors: SQLQuery = "SELECT u.tag_id, count(DISTINCT u.author_id) AS authors FROM (\(used)) u WHERE true"
        authors.append(Visibility.notSuspended("u.author_id"))
        authors.append(" GROUP BY u.tag_id")
        let query: SQLQuery = """
            SELECT t.name, t.posts_count, a.authors FROM (\(authors)) a JOIN tags t ON t.id = a.tag_id
            ORDER BY a.authors DESC, t.posts_count DESC, t.id DESC LIMIT \(literal: Self.maxListed)
            """
        return try pool.withReadConnection { connection in
            try connection.query(query).rows.map { row in
                TrendingTag(name: try row.decode("name"), postsCount: Int64(try row.decode("posts_count", as: Int32.self)),
                            authors24h: try row.decode("authors"))
            }
        }
    }

    /// A name as a path gives it, without a leading `#` (`/api/tags/%23cafe` is `cafe`).
    private static func bare(_ name: String) -> String {
        name.hasPrefix("#") ? String(name.dropFirst()) : name
    }
}
