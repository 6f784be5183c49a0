import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// API.md "Feeds at any scale": nothing grows without bound. Notifications past
/// `NOTIFICATIONS_RETENTION` or past a recipient's newest 1,000, feed rows past a reader's
/// depth and push tokens past `PUSH_TOKEN_RETENTION` go in the pruner's round (the clock
/// advanced rather than waited for), each rule counted in /metrics.
@Suite struct RetentionTests {
    private static func count(_ sql: SQLQuery, in app: Application) throws -> Int {
        try app.pool.withConnection { try $0.query(sql).firstRow().decode("n", as: Int.self) }
    }

    private static func removed(_ rule: String, in app: Application) throws -> Double? {
        let text = try APIClient(port: app.server.port).get("/metrics").text
        let prefix = "upkeep_removed_total{rule=\"\(rule)\"} "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.dropFirst(prefix.count)) }
    }

    @Test func notificationsAndPushTokens_goAfterTheirRetention() throws {
        let clock = ServerClock()
        let app = try TestApplication.start(clock: clock) {
            $0.notificationsRetention = .seconds(30 * 24 * 3600)
            $0.pushTokenRetention = .seconds(60 * 24 * 3600)
        }
        defer { app.stop() }
        // The background round would race these for the same rows.
        app.jobs.hold([.upkeepPrune])
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try ash.pushToken("apns", "ash-phone").status == 200)
        #expect(try blair.send("PUT", "/api/posts/\(try ash.createPost("liked").id)/like").status == 200)
        let notifications: SQLQuery = "SELECT count(*) AS n FROM notifications"
        let tokens: SQLQuery = "SELECT count(*) AS n FROM push_tokens"
        #expect(try Self.count(notifications, in: app) == 1)

        clock.advance(by: .seconds(29 * 24 * 3600))
        try app.upkeepPruner.pruneOnce()
        #expect(try Self.count(notifications, in: app) == 1 && Self.count(tokens, in: app) == 1)
        clock.advance(by: .seconds(2 * 24 * 3600))
        try app.upkeepPruner.pruneOnce()
        #expect(try Self.count(notifications, in: app) == 0 && Self.count(tokens, in: app) == 1)
        #expect((try ash.get("/api/notifications").json["notifications"] as? [Any])?.isEmpty == true)
        clock.advance(by: .seconds(30 * 24 * 3600))
        try app.upkeepPruner.pruneOnce()
        #expect(try Self.count(tokens, in: app) == 0)
        #expect(try Self.removed("old_notifications", in: app) == 1 && Self.removed("unused_push_tokens", in: app) == 1)
    }

    /// A recipient keeps its newest 1,000 notifications, a reader its newest
    /// `FeedService.depth` feed rows; others' rows are untouched.
    @Test func perUserCaps_keepTheNewestRows() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        app.jobs.hold([.upkeepPrune])
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let (ashID, blairID) = (Int64(try ash.userID()), Int64(try blair.userID()))
        let depth = Int64(FeedService.depth)
        try app.pool.withConnection { connection in
            try connection.query("""
                INSERT INTO notifications (recipient_id, actor_id, type, created_at)
                SELECT \(ashID), \(blairID), 'followed', now() - n * interval '1 minute' FROM generate_series(1, 1010) n
                """)
            try connection.query("""
                INSERT INTO notifications (recipient_id, actor_id, type) SELECT \(blairID), \(ashID), 'followed'
                FROM generate_series(1, 10)
                """)
            try connection.query("""
                INSERT INTO feed_entries (user_id, post_id, author_id, created_at)
                SELECT \(ashID), n, \(blairID), now() - n * interval '1 minute' FROM generate_series(1, \(depth + 25)) n
                """)
        }
        try app.upkeepPruner.pruneOnce()
        #expect(try Self.count("SELECT count(*) AS n FROM notifications WHERE recipient_id = \(ashID)", in: app) == 1000)
        #expect(try Self.count("SELECT count(*) AS n FROM notifications WHERE recipient_id = \(blairID)", in: app) == 10)
        // The newest stay: all 1,000 within 999 minutes of the newest.
        #expect(try Self.count("""
            SELECT count(*) AS n FROM notifications WHERE recipient_id = \(ashID) AND created_at >= (
                SELECT max(created_at) FROM notifications WHERE recipient_id = \(ashID)) - interval '999 minutes'
            """, in: app) == 1000)
        #expect(try Self.count("SELECT count(*) AS n FROM feed_entries WHERE user_id = \(ashID)", in: app) == Int(depth))
        #expect(try Self.count("SELECT max(post_id) AS n FROM feed_entries WHERE user_id = \(ashID)", in: app) == Int(depth))
        #expect(try Self.removed("notifications_per_recipient", in: app) == 10 && Self.removed("feed_depth", in: app) == 25)
        // A second round finds nothing more.
        #expect(try app.upkeepPruner.pruneOnce().values.reduce(0, +) == 0)
    }
}
