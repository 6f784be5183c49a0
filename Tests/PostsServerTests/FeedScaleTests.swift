import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// API.md "Feeds at any scale": a post's fan-out leaves its transaction for the job queue,
/// very large authors are merged into their followers' feeds as they are read, and the
/// feed pages back to its depth, then ends.
@Suite struct FeedScaleTests {
    private static func ids(_ client: APIClient, limit: Int = 100) throws -> [Int] {
        try client.walk("/api/feed", "posts", limit: limit).compactMap { $0["id"] as? Int }
    }

    private static func count(_ sql: SQLQuery, in app: Application) throws -> Int {
        try app.pool.withConnection { try $0.query(sql).firstRow().decode("n", as: Int.self) }
    }

    /// 200,000 followers: the post queues no fan-out and writes no feed row (its cost does
    /// not depend on them); its followers have it at once, a newcomer's follow too; a block
    /// takes it away from the blocker; the account's deletion succeeds.
    @Test func aCelebrityWith200kFollowers_posts_isFollowed_blocked_andDeleted() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let star = try APIClient(port: app.server.port, timeout: .seconds(120))
        star.headers["X-User-Email"] = "star@example.com"
        let starID = try star.userID()
        try BulkFollowers.make(200_000, of: starID, in: app)
        let post = try star.createPost("to two hundred thousand").id
        #expect(try Self.count("SELECT count(*) AS n FROM jobs WHERE kind = 'feed.fanout'", in: app) == 0)
        #expect(try Self.count("SELECT count(*) AS n FROM feed_entries WHERE post_id = \(Int64(post))", in: app) == 0)
        #expect(try Self.count("SELECT count(*) AS n FROM feed_large_authors WHERE user_id = \(Int64(starID))", in: app) == 1)
        let first = try APIClient.user("fan1@example.com", on: app)
        let last = try APIClient.user("fan200000@example.com", on: app)
        #expect(try Self.ids(first) == [post] && Self.ids(last) == [post])
        let newcomer = try APIClient.user("newcomer@example.com", on: app)
        #expect(try newcomer.follow(starID).status == 200)
        let second = try star.createPost("and one more").id
        #expect(try Self.ids(newcomer) == [second, post] && Self.ids(first) == [second, post])
        #expect(try first.send("PUT", "/api/users/\(starID)/block").status == 200)
        #expect(try Self.ids(first) == [] && Self.ids(last) == [second, post])
        #expect(try star.send("DELETE", "/api/me").status == 200)
        #expect(try Self.ids(last) == [] && Self.ids(newcomer) == [])
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])
    }

    /// A fan-out stopped halfway (its server gone), a follow made meanwhile, then another
    /// server that finds the job as a dead runner leaves it (claimed, its lease running):
    /// once the lease ends it goes on from the job's cursor, and every follower has the
    /// post exactly once.
    @Test func aFanOutCutShort_isFinishedByTheNextServer_everyFollowerOnce() throws {
        let database = try TestDatabase.makeDatabase(in: .shared)
        // A hundred batches of ~5-10 ms each: the test stops the server within the first few.
        let followers = 100_000
        let first = try TestApplication.start(conninfo: database) { $0.feedFanOutLimit = 1_000_000 }
        let author = try APIClient.user("author@example.com", on: first)
        let authorID = try author.userID()
        try BulkFollowers.make(followers, of: authorID, in: first)
        let post = Int64(try author.createPost("to a hundred thousand").id)
        let rows: SQLQuery = "SELECT count(*) AS n FROM feed_entries WHERE post_id = \(post)"
        #expect(try eventually { try Self.count(rows, in: first) > 0 })
        first.stop()
        // (The stopped server's pool is closed: read on a connection of the test's own.)
        let admin = try PostgresConnection(conninfo: database)
        defer { admin.close() }
        let written = try admin.query(rows).firstRow().decode("n", as: Int.self)
        #expect(written < followers, "the fan-out was cut short (\(written) rows)")

        // What a runner killed mid-try leaves: the job claimed, its lease not yet over.
        try admin.query("""
            UPDATE jobs SET state = 'running', attempts = attempts + 1, run_at = now() + interval '300 seconds'
            WHERE kind = 'feed.fanout'
            """)
        let clock = ServerClock()
        let second = try TestApplication.start(conninfo: database, clock: clock) { $0.feedFanOutLimit = 1_000_000 }
        defer { second.stop() }
        let newcomer = try APIClient.user("newcomer@example.com", on: second)
        #expect(try newcomer.follow(authorID).status == 200)
        #expect(try Self.ids(newcomer) == [Int(post)], "a follow made during the fan-out copies the post itself")
        clock.advance(by: .seconds(301))
        #expect(try second.feedsSettled())
        #expect(try Self.count(rows, in: second) == followers + 1)
        #expect(try Self.count("""
            SELECT count(*) AS n FROM follows f
            WHERE f.followee_id = \(Int64(authorID))
              AND NOT EXISTS (SELECT 1 FROM feed_entries fe WHERE fe.user_id = f.follower_id AND fe.post_id = \(post))
            """, in: second) == 0)
        #expect(try FollowAudit.mismatches(in: second) == [0, 0, 0])
    }

    /// Past `FEED_FANOUT_LIMIT` followers an author is merged as feeds are read from its next
    /// post on: the posts fanned out before and those merged after page as one feed, with no
    /// duplicate or gap, for old followers and new; unfollow, mute and suspension apply on
    /// the next read.
    @Test func anAuthorPastTheLimit_isMergedIntoFeeds_withoutDuplicatesOrGaps() throws {
        let app = try TestApplication.start { $0.feedFanOutLimit = 3 }
        defer { app.stop() }
        let star = try APIClient.user("star@example.com", on: app)
        let starID = try star.userID()
        let readers = try ["ash", "blair"].map { try APIClient.user("\($0)@example.com", on: app) }
        let other = try APIClient.user("other@example.com", on: app)
        for reader in readers {
            #expect(try reader.follow(starID).status == 200)
            #expect(try reader.follow(try other.userID()).status == 200)
        }
        var made: [Int] = []
        for round in 0..<4 {
            made.append(try star.createPost("star \(round)").id)
            made.append(try other.createPost("other \(round)").id)
            made.append(try readers[0].createPost("own \(round)").id)
        }
        #expect(try app.feedsSettled())
        // With two followers the star is fanned out; a third makes it large from its next post.
        let carol = try APIClient.user("carol@example.com", on: app)
        #expect(try carol.follow(starID).status == 200)
        for round in 4..<8 {
            made.append(try star.createPost("star \(round)").id)
            made.append(try other.createPost("other \(round)").id)
            made.append(try readers[0].createPost("own \(round)").id)
        }
        #expect(try app.feedsSettled())
        #expect(try Self.count("SELECT count(*) AS n FROM feed_large_authors WHERE user_id = \(Int64(starID))", in: app) == 1)
        for limit in [1, 4, 7, 100] { #expect(try Self.ids(readers[0], limit: limit) == made.reversed()) }
        let starPosts = Set(made.enumerated().filter { $0.offset % 3 == 0 }.map(\.element))
        let ownPosts = Set(made.enumerated().filter { $0.offset % 3 == 2 }.map(\.element))
        #expect(try Self.ids(readers[1]) == made.reversed().filter { !ownPosts.contains($0) })
        #expect(try Self.ids(carol) == made.reversed().filter { starPosts.contains($0) }, "copied before, merged after")
        // A follow of a large author copies its posts from before it was large; the rest is merged.
        let dana = try APIClient.user("dana@example.com", on: app)
        #expect(try dana.follow(starID).status == 200)
        #expect(try Self.ids(dana) == made.reversed().filter { starPosts.contains($0) })
        // Unfollowed, muted, suspended: gone on the next read.
        #expect(try readers[1].follow(starID, false).status == 200)
        #expect(try Self.ids(readers[1]).allSatisfy { !starPosts.contains($0) })
        #expect(try readers[0].send("PUT", "/api/users/\(starID)/mute").status == 200)
        #expect(try Self.ids(readers[0]).allSatisfy { !starPosts.contains($0) })
        let mod = try APIClient.moderator("mod@example.com", on: app)
        #expect(try mod.send("POST", "/api/moderation/users/\(starID)/suspend", json: [:]).status == 200)
        #expect(try Self.ids(carol) == [])
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])
    }

    /// API.md: the feed pages back at least 800 posts (this server: `FeedService.depth`),
    /// newest first, then `next_cursor` is null.
    @Test func theFeed_pagesToItsDepth_thenEnds() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let ashID = try ash.userID()
        let made = FeedService.depth + 30
        try app.pool.withConnection { connection in
            try connection.query("""
                INSERT INTO posts (user_id, title, summary, body, created_at)
                SELECT \(Int64(ashID)), 'post ' || n, 's', 'b', now() - n * interval '1 second'
                FROM generate_series(1, \(Int64(made))) n
                """)
            try connection.query("UPDATE profiles SET posts_count = \(Int64(made)) WHERE user_id = \(Int64(ashID))")
        }
        for limit in [100, 7] {
            let shown = try Self.ids(ash, limit: limit)
            // (Arrays this long are not worth printing.)
            let whole = shown.count == FeedService.depth && Set(shown).count == shown.count
            let newestFirst = shown == shown.sorted()  // each post a second older than the one before
            #expect(whole && newestFirst, "\(shown.count) posts")
        }
        // A cursor past the depth is not one this server hands out.
        let past = FeedCursor(position: KeysetCursor(createdAt: PostgresTimestamp(microsecondsSince2000: 0), id: 1),
                              shown: FeedService.depth)
        #expect(try ash.get("/api/feed?cursor=\(past.text)").status == 400)
    }
}
