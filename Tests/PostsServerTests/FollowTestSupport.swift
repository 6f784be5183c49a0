import Foundation
import Postgres
import PostsServer
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
    /// followers' feeds: all zero.
    static func mismatches(in app: Application) throws -> [Int] {
        try app.pool.withConnection { connection in
            let row = try connection.query("""
                SELECT
                  (SELECT count(*) FROM profiles pr WHERE
                      followers_count <> (SELECT count(*) FROM follows WHERE followee_id = pr.user_id)
                      OR following_count <> (SELECT count(*) FROM follows WHERE follower_id = pr.user_id)
                      OR posts_count <> (SELECT count(*) FROM posts WHERE user_id = pr.user_id)) AS counters,
                  (SELECT count(*) FROM feed_entries fe WHERE NOT EXISTS (
                      SELECT 1 FROM follows f WHERE f.follower_id = fe.user_id AND f.followee_id = fe.author_id)
                      OR NOT EXISTS (SELECT 1 FROM posts p WHERE p.id = fe.post_id AND p.user_id = fe.author_id)) AS stray,
                  (SELECT count(*) FROM follows f JOIN posts p ON p.user_id = f.followee_id AND NOT p.deleted
                   WHERE NOT EXISTS (SELECT 1 FROM feed_entries fe WHERE fe.user_id = f.follower_id AND fe.post_id = p.id)) AS missing
                """).firstRow()
            return [try row.decode("counters"), try row.decode("stray"), try row.decode("missing")]
        }
    }
}
