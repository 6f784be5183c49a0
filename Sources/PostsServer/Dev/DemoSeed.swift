import Foundation
import HTTP
import Postgres

/// Writes a `DemoPlan`: for `POST /api/dev/seed`, and for the first start of
/// `posts-server dev`. Each row's events are recorded as the routes' are (the counts in each
/// change are those right after that row), so an app that follows `/api/changes` sees
/// seeded content arrive like any other, and its people are notified (never pushed: a seed
/// queues no jobs). One transaction: all or nothing.
public struct DemoSeed: Sendable {
    public struct Counts: Sendable, Equatable {
        public let users: Int
        public let posts: Int
        public let likes: Int
        public let comments: Int
        public let commentLikes: Int
        public let follows: Int
    }

    static let maxUsers = 1_000
    static let maxPosts = 10_000
    /// Rows per statement: a few hundred milliseconds each, far below the pool's statement
    /// timeout even on a busy machine (10,000 posts in one statement took over a second).
    static let rowsPerStatement = 2_000
    /// What a seed's statements and its COMMIT may each take.
    static let patience: Duration = .seconds(120)

    let pool: ConnectionPool
    /// Posts and comments are dated back from its now.
    let clock: ServerClock
    let effects: EventEffects

    public init(pool: ConnectionPool, clock: ServerClock) {
        self.pool = pool
        self.clock = clock
        effects = EventEffects(jobs: .none, clock: clock)
    }

    /// True when it seeded: only a database without users gets the first-start demo. The
    /// tree lock held alone makes two servers starting at once seed it once.
    @discardableResult
    public func seedIfEmpty() throws -> Bool {
        try pool.withTransaction { connection in
            try Write.take(.wholeTree, on: connection)
            let users: Int = try connection.query("SELECT count(*) AS n FROM users WHERE email <> \(ReservedUser.email)").firstRow().decode("n")
            guard users == 0 else { return false }
            _ = try run(users: 5, posts: 24)
            return true
        }
    }

    /// With no new users, the posts are written by (and liked by) people already there,
    /// the newest hundred profiles; with nobody there at all, posts are 409.
    func run(users userCount: Int, posts postCount: Int) throws -> Counts {
        // Thousands of rows a statement: seconds on a busy machine, more than a request's
        // limits (behind a transaction pooler only the client side's 4.5 s applies).
        try pool.withLongTransaction(limit: Self.patience) { connection in
            let existing = userCount > 0 || postCount == 0 ? [] : try Self.existingAuthors(on: connection)
            // Before any write, as every write about posts does (see WriteLocks); the existing
            // authors' profiles shared, as a post of theirs takes it (their followers hold still
            // for the fan-out).
            var locks = WriteLocks.posts([])
            for author in existing { locks.add(profile: author, .shared) }
            try Write.take(locks, on: connection)
            guard userCount > 0 || postCount == 0 || !existing.isEmpty else {
                throw APIError.conflict("there are no users to write the posts: ask for users too")
            }
            var random = SystemRandomNumberGenerator()
            let plan = DemoPlan(users: userCount, posts: postCount, authors: userCount > 0 ? userCount : existing.count,
                                batch: Self.batchTag(using: &random), using: &random)
            let created = try DemoRows.insertUsers(plan.users, clock: clock, on: connection)
            let authors = userCount > 0 ? created : existing
            let follows = try DemoFollows.insert(among: created, effects: effects, on: connection)
            let rows = DemoRows(effects: effects, clock: clock, connection: connection)
            let postIDs = try DemoRows.reservePostIDs(count: plan.posts.count, on: connection)
            for range in Self.slices(of: plan.posts.count) {
                try rows.insertPosts(plan.posts[range], of: plan.posts, ids: postIDs, authors: authors)
            }
            for range in Self.slices(of: plan.likes.count) {
                try rows.insertLikes(plan.likes[range], postIDs: postIDs, authors: authors)
            }
            // Made here so that a reply can name its comment, whichever statement writes either.
            let commentIDs = plan.comments.map { _ in UUID() }
            for range in Self.slices(of: plan.comments.count) {
                try rows.insertComments(plan.comments[range], of: plan.comments, ids: commentIDs, postIDs: postIDs, authors: authors)
            }
            for range in Self.slices(of: plan.commentLikes.count) {
                try rows.insertCommentLikes(plan.commentLikes[range], commentIDs: commentIDs, authors: authors)
            }
            for range in Self.slices(of: postIDs.count) {
                try DemoRows.settleCounters(of: postIDs[range], on: connection)
            }
            return Counts(users: created.count, posts: postIDs.count, likes: plan.likes.count,
                          comments: plan.comments.count, commentLikes: plan.commentLikes.count,
                          follows: follows)
        }
    }

    private static func slices(of count: Int) -> [Range<Int>] {
        stride(from: 0, to: count, by: rowsPerStatement).map { $0..<min($0 + rowsPerStatement, count) }
    }

    private static func existingAuthors(on connection: PostgresConnection) throws -> [Int64] {
        try connection.query("""
            SELECT user_id FROM profiles WHERE username <> \(ReservedUser.username) ORDER BY user_id DESC LIMIT 100
            """).rows
            .map { try $0.decode("user_id") }
    }

    /// Four characters of a-z0-9: usernames stay unique from one seed to the next.
    private static func batchTag(using random: inout SystemRandomNumberGenerator) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<4).map { _ in alphabet.randomElement(using: &random)! })
    }
}
