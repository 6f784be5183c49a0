import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// What the follows tests share: a user's id, following, and the audit that holds every
/// counter and every feed row to what the tables imply.
extension APIClient {
    @discardableResult
    func follow(_ userID: Int, _ on: Bool = true) throws -> RawHTTPClient.Response {
        try send(on ? "PUT" : "DELETE", "/api/users/\(userID)/follow")
    }

    /// Every page of a list of posts or profiles, following `next_cursor` (from `start`).
    func walk(_ path: String, _ member: String, limit: Int, from start: String? = nil) throws -> [[String: Any]] {
        var items: [[String: Any]] = []
        var cursor = start
        repeat {
            let separator = path.contains("?") ? "&" : "?"
            let page = try get("\(path)\(separator)limit=\(limit)\(cursor.map { "&cursor=\($0)" } ?? "")")
            #expect(page.status == 200, "\(page.text)")
            items += page.json[member] as? [[String: Any]] ?? []
            cursor = page.json["next_cursor"] as? String
        } while cursor != nil
        return items
    }

    func profile(_ userID: Int) throws -> [String: Any] {
        try #require(try get("/api/profiles/\(userID)").json["profile"] as? [String: Any])
    }
}

enum FollowAudit {
    /// Profiles whose counters differ from a count of the rows, feed rows with no follow or
    /// no post of that author behind them, and posts of followees missing from their
    /// followers' feeds within their depth (but a large author's, merged as feeds are
    /// read): all zero, once
    /// every fan-out and account purge queued so far is done.
    static func mismatches(in app: Application) throws -> [Int] {
        #expect(try app.jobsDone([.feedFanOut, .accountPurge]), "the fan-outs and purges finish")
        // Its own connection: over hundreds of thousands of rows it outlasts a statement timeout.
        let connection = try PostgresConnection(conninfo: try #require(app.configuration.directDatabaseURL), queryTimeout: .zero)
        defer { connection.close() }
        let row = try connection.query("""
            SELECT
              -- Counted by grouping, not per profile: with one author followed by everyone a
              -- per-profile count is planned as a scan of all follows, for each profile.
              (SELECT count(*) FROM profiles pr
               LEFT JOIN (SELECT followee_id AS id, count(*) AS n FROM follows GROUP BY 1) ers ON ers.id = pr.user_id
               LEFT JOIN (SELECT follower_id AS id, count(*) AS n FROM follows GROUP BY 1) ing ON ing.id = pr.user_id
               LEFT JOIN (SELECT user_id AS id, count(*) AS n FROM posts GROUP BY 1) ps ON ps.id = pr.user_id
               WHERE pr.followers_count <> coalesce(ers.n, 0) OR pr.following_count <> coalesce(ing.n, 0)
                  OR pr.posts_count <> coalesce(ps.n, 0)) AS counters,
              (SELECT count(*) FROM feed_entries fe WHERE NOT EXISTS (
                  SELECT 1 FROM follows f WHERE f.follower_id = fe.user_id AND f.followee_id = fe.author_id)
                  OR NOT EXISTS (SELECT 1 FROM posts p WHERE p.id = fe.post_id AND p.user_id = fe.author_id)) AS stray,
              -- Within the reader's depth only: the upkeep round (every 30 s) cuts a feed to
              -- its newest FeedService.depth rows, and a slow run lasts long enough for one.
              (SELECT count(*) FROM (
                  SELECT f.follower_id, p.id, row_number() OVER (
                      PARTITION BY f.follower_id ORDER BY p.created_at DESC, p.id DESC) AS rank
                  FROM follows f JOIN posts p ON p.user_id = f.followee_id AND NOT p.deleted
                  WHERE NOT EXISTS (SELECT 1 FROM feed_large_authors l WHERE l.user_id = f.followee_id)
               ) due
               WHERE due.rank <= \(literal: FeedService.depth) AND NOT EXISTS (
                  SELECT 1 FROM feed_entries fe WHERE fe.user_id = due.follower_id AND fe.post_id = due.id)) AS missing
            """).firstRow()
        let found: [Int] = [try row.decode("counters"), try row.decode("stray"), try row.decode("missing")]
        if found != [0, 0, 0] { Issue.record("audit [counters, stray, missing] = \(found): \(try details(on: connection))") }
        return found
    }

    /// The first rows behind a mismatch, for the failure's message (a flake once seen in a
    /// loaded run could not be told apart without them).
    private static func details(on connection: PostgresConnection) throws -> String {
        let counters = try connection.query("""
            SELECT pr.user_id, pr.posts_count, pr.followers_count, pr.following_count,
                   (SELECT count(*) FROM posts p WHERE p.user_id = pr.user_id) AS posts,
                   (SELECT count(*) FROM follows f WHERE f.followee_id = pr.user_id) AS followers,
                   (SELECT count(*) FROM follows f WHERE f.follower_id = pr.user_id) AS following
            FROM profiles pr ORDER BY pr.user_id LIMIT 20
            """).rows.map { row in
            "user \(try row.decode("user_id", as: Int64.self)): posts_count \(try row.decode("posts_count", as: Int32.self))/"
                + "\(try row.decode("posts", as: Int64.self)), followers \(try row.decode("followers_count", as: Int32.self))/"
                + "\(try row.decode("followers", as: Int64.self)), following \(try row.decode("following_count", as: Int32.self))/"
                + "\(try row.decode("following", as: Int64.self))"
        }
        let feed = try connection.query("""
            SELECT fe.user_id, fe.post_id, fe.author_id, p.user_id AS owner, p.deleted
            FROM feed_entries fe LEFT JOIN posts p ON p.id = fe.post_id ORDER BY fe.user_id, fe.post_id LIMIT 20
            """).rows.map { row in
            "feed \(try row.decode("user_id", as: Int64.self)) ← post \(try row.decode("post_id", as: Int64.self)) by "
                + "\(try row.decode("author_id", as: Int64.self)) (owner \(String(describing: try row.decode("owner", as: Int64?.self))), "
                + "deleted \(String(describing: try row.decode("deleted", as: Bool?.self))))"
        }
        let posts = try connection.query("SELECT id, user_id, parent_id, deleted FROM posts ORDER BY id LIMIT 20").rows.map { row in
            "post \(try row.decode("id", as: Int64.self)) by \(try row.decode("user_id", as: Int64.self)) under "
                + "\(String(describing: try row.decode("parent_id", as: Int64?.self))) deleted \(try row.decode("deleted", as: Bool.self))"
        }
        return (counters + feed + posts).joined(separator: "; ")
    }
}

extension Application {
    /// Waits until every new post's fan-out (a `feed.fanout` job, run after the post's
    /// commit) is done: its followers' feeds then hold it. True unless 60 s pass first.
    func feedsSettled() throws -> Bool {
        try jobsDone([.feedFanOut])
    }

    /// Runs the jobs of these kinds (`JobRunner.drain`) until none is left (done, or dead).
    /// True unless 60 s pass first (a purge of 200,000 follows takes seconds, on a machine
    /// the whole test run shares). A job that failed and waits out its backoff (a deadlock
    /// retried) is drained again once it is due.
    func jobsDone(_ kinds: [JobKind]) throws -> Bool {
        try eventually(timeout: .seconds(60)) {
            try jobs.drain(kinds, timeout: .seconds(60)) && pool.withConnection { connection in
                try connection.query("""
                    SELECT count(*) AS n FROM jobs WHERE kind = ANY(\(PostgresArray(kinds.map(\.name)))) AND state <> 'dead'
                    """).firstRow().decode("n", as: Int.self) == 0
            }
        }
    }
}

enum BulkFollowers {
    /// `count` new users (`<prefix><n>@example.com`, n from 1) who follow `userID`, written
    /// by SQL with their counters (hundreds of thousands in seconds, on a connection of its
    /// own: longer than the server's statement timeout); their ids, in order.
    @discardableResult
    static func make(_ count: Int, of userID: Int, prefix: String = "fan", in app: Application) throws -> [Int64] {
        let connection = try PostgresConnection(conninfo: try #require(app.configuration.directDatabaseURL), queryTimeout: .zero)
        defer { connection.close() }
        let ids = try connection.query("""
            WITH u AS (
                INSERT INTO users (email) SELECT \(prefix)::text || n || '@example.com' FROM generate_series(1, \(Int64(count))) n
                RETURNING id
            ), pr AS (
                INSERT INTO profiles (user_id, username, following_count) SELECT id, \(prefix)::text || id, 1 FROM u
            ), f AS (
                INSERT INTO follows (follower_id, followee_id) SELECT id, \(Int64(userID)) FROM u
            )
            SELECT id FROM u ORDER BY id
            """).rows.map { try $0.decode("id", as: Int64.self) }
        try connection.query("""
            UPDATE profiles SET followers_count = followers_count + \(Int64(count)) WHERE user_id = \(Int64(userID))
            """)
        try connection.query("ANALYZE follows")
        return ids
    }
}
