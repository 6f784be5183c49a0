import Dispatch
import Foundation
import Postgres
@testable import PostsServer
import Synchronization
import Testing
import TestSupport

/// The one lock order under load (`WriteLocks`): an account is deleted while the people it
/// follows and is followed by follow and unfollow it, post under its posts, like them and
/// post their own, all at once. Nothing a client gets is a 5xx (a deadlock PostgreSQL
/// breaks is run again, never answered), and every counter and feed row adds up after.
@Suite(.serialized) struct LockOrderStressTests {
    private final class Answers: Sendable {
        let statuses = Mutex<[String: Int]>([:])

        func record(_ what: String, _ status: Int) {
            statuses.withLock { $0["\(what) \(status)", default: 0] += 1 }
        }

        var failures: [String] { statuses.withLock { $0.keys.filter { $0.hasSuffix(" 0") || $0.contains(" 5") }.sorted() } }
    }

    @Test func anAccountDeletedWhileItsFollowsPostAndLike_answersNo5xx_andLeavesEverythingExact() throws {
        let app = try TestApplication.start { $0.databasePoolSize = 6 }
        defer { app.stop() }
        let victim = try APIClient.user("victim@example.com", on: app)
        let victimID = try victim.userID()
        let others = try (0..<6).map { try APIClient.user("other\($0)@example.com", on: app) }
        let otherIDs = try others.map { try $0.userID() }
        let victimPosts = try (0..<8).map { try victim.createPost("victim \($0)").id }
        for (client, id) in zip(others, otherIDs) {
            #expect(try client.follow(victimID).status == 200)
            #expect(try victim.follow(id).status == 200)
        }
        let answers = Answers()
        let port = app.server.port
        let deleted = Atomic<Bool>(false)
        let done = DispatchGroup()
        // Six people at work on the victim's things (each on a thread of its own) while a
        // seventh deletes the account once they are under way; each keeps on for a few
        // rounds after it is gone (at most 200 rounds in all).
        for worker in 0...others.count {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                guard let client = try? APIClient(port: port, timeout: .seconds(60)) else { return answers.record("connect", 0) }
                if worker == others.count {
                    client.headers["X-User-Email"] = "victim@example.com"
                    _ = eventually(timeout: .seconds(120)) { answers.statuses.withLock { $0.values.reduce(0, +) } >= 150 }
                    answers.record("delete", (try? client.send("DELETE", "/api/me"))?.status ?? 0)
                    deleted.store(true, ordering: .releasing)
                    return
                }
                client.headers["X-User-Email"] = "other\(worker)@example.com"
                var roundsAfter = 0
                for round in 0..<200 where roundsAfter < 2 {
                    if deleted.load(ordering: .acquiring) { roundsAfter += 1 }
                    let post = victimPosts[(worker + round) % victimPosts.count]
                    let steps: [(String, String, String, [String: Any?]?)] = [
                        ("follow", "PUT", "/api/users/\(victimID)/follow", nil),
                        ("reply", "POST", "/api/posts", ["title": "re", "summary": "s", "body": "b", "parent_id": post]),
                        ("like", "PUT", "/api/posts/\(post)/like", nil),
                        ("own post", "POST", "/api/posts", ["title": "mine", "summary": "s", "body": "b"]),
                        ("comment", "POST", "/api/posts/\(post)/comments", ["body": "hi"]),
                        ("unfollow", "DELETE", "/api/users/\(victimID)/follow", nil),
                    ]
                    for (what, method, path, json) in steps {
                        answers.record(what, (try? client.send(method, path, json: json))?.status ?? 0)
                    }
                }
            }
        }
        #expect(done.wait(timeout: .now() + 300) == .success)
        #expect(answers.failures.isEmpty, "\(answers.statuses.withLock { $0 })")
        let deadlocks: Int = try app.pool.withConnection {
            try $0.query("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()").firstRow().decode("deadlocks")
        }
        print("lock-order stress: \(answers.statuses.withLock { $0 }.sorted { $0.key < $1.key }), deadlocks broken and run again: \(deadlocks)")
        #expect(answers.statuses.withLock { $0["delete 200"] } == 1)
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])
        #expect(try APIClient(port: port).get("/api/profiles/\(victimID)").status == 404)
    }

    /// Past `WriteLocks.maxProfiles` follow partners, an account's deletion leaves its follows
    /// to a job (`AccountPurge`) that removes them a batch of partners a transaction, each
    /// with one lock per partner (a statement taking one per follower ran out of PostgreSQL's
    /// lock table: "out of shared memory"; all profiles at once held up every write): the
    /// account is hidden at once, and every follow is recorded and counted.
    @Test func anAccountWithManyFollowers_isDeleted_withItsFollowsCounted() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let star = try APIClient(port: app.server.port, timeout: .seconds(120))
        star.headers["X-User-Email"] = "star@example.com"
        let starID = try star.userID()
        let followers = 20 * AccountPurge.partnersPerBatch + 17
        try app.pool.withConnection { connection in
            try connection.query("""
                WITH u AS (
                    INSERT INTO users (email) SELECT 'fan' || n || '@example.com' FROM generate_series(1, \(Int64(followers))) n
                    RETURNING id
                ), pr AS (
                    INSERT INTO profiles (user_id, username, following_count) SELECT id, 'fan' || id, 1 FROM u
                )
                INSERT INTO follows (follower_id, followee_id) SELECT id, \(Int64(starID)) FROM u
                """)
            try connection.query("UPDATE profiles SET followers_count = \(Int64(followers)) WHERE user_id = \(Int64(starID))")
        }
        let since = try ChangeLogTests.position(star)
        #expect(try star.send("DELETE", "/api/me").status == 200)
        // Its email free at once: in trust mode the same address is a new account.
        #expect(try star.userID() != starID)
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])
        #expect(try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM users WHERE id = \(Int64(starID))")
            .firstRow().decode("n", as: Int.self) } == 0, "the account is gone once its purge is done")
        #expect(try star.get("/api/profiles/\(starID)").status == 404)
        let unfollowed = try app.pool.withConnection { connection in
            try connection.query("""
                SELECT count(*) AS n FROM changes
                WHERE type = 'follow.changed' AND user_id = \(Int64(starID)) AND txid::text::bigint > \(Int64(ChangeKey(since).txid))
                """).firstRow().decode("n", as: Int.self)
        }
        #expect(unfollowed == followers, "one follow.changed per follow removed")
    }
}
