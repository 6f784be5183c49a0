import HTTP
import Postgres

/// Writes a `DemoPlan`: for `POST /api/dev/seed`, and for the first start of
/// `posts-server dev`. Each row's change is recorded as the routes record theirs (the
/// counts in each change are those right after that row), so an app that follows
/// `/api/changes` sees seeded content arrive like any other. One transaction: all or nothing.
public struct DemoSeed: Sendable {
    public struct Counts: Sendable, Equatable {
        public let users: Int
        public let posts: Int
        public let likes: Int
        public let comments: Int
    }

    static let maxUsers = 1_000
    static let maxPosts = 10_000

    let pool: ConnectionPool

    public init(pool: ConnectionPool) {
        self.pool = pool
    }

    /// True when it seeded: only a database without users gets the first-start demo.
    @discardableResult
    public func seedIfEmpty() throws -> Bool {
        let users: Int = try pool.withConnection { try $0.query("SELECT count(*) AS n FROM users").first!.decode("n") }
        guard users == 0 else { return false }
        _ = try run(users: 5, posts: 24)
        return true
    }

    /// With no new users, the posts are written by (and liked by) people already there,
    /// the newest hundred profiles; with nobody there at all, posts are 409.
    func run(users userCount: Int, posts postCount: Int) throws -> Counts {
        try pool.withTransaction { connection in
            let existing = userCount > 0 || postCount == 0 ? [] : try Self.existingAuthors(on: connection)
            guard userCount > 0 || postCount == 0 || !existing.isEmpty else {
                throw HTTPError(.conflict, message: "there are no users to write the posts: ask for users too")
            }
            var random = SystemRandomNumberGenerator()
            let plan = DemoPlan(users: userCount, posts: postCount, authors: userCount > 0 ? userCount : existing.count,
                                batch: Self.batchTag(using: &random), using: &random)
            let created = try DemoRows.insertUsers(plan.users, on: connection)
            let authors = userCount > 0 ? created : existing
            let postIDs = try DemoRows.insertPosts(plan.posts, authors: authors, on: connection)
            try DemoRows.insertLikes(plan.likes, postIDs: postIDs, authors: authors, on: connection)
            try DemoRows.insertComments(plan.comments, postIDs: postIDs, authors: authors, on: connection)
            try DemoRows.settleCounters(of: postIDs, on: connection)
            return Counts(users: created.count, posts: postIDs.count, likes: plan.likes.count,
                          comments: plan.comments.count)
        }
    }

    private static func existingAuthors(on connection: PostgresConnection) throws -> [Int64] {
        try connection.query("SELECT user_id FROM profiles ORDER BY user_id DESC LIMIT 100").rows
            .map { try $0.decode("user_id") }
    }

    /// Four characters of a-z0-9: usernames stay unique from one seed to the next.
    private static func batchTag(using random: inout SystemRandomNumberGenerator) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<4).map { _ in alphabet.randomElement(using: &random)! })
    }
}
