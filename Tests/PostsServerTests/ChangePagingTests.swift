import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// `/api/changes`: pages, filters, 410 after retention, and cursors that never skip a
/// change committed out of the order its transaction started in.
@Suite struct ChangePagingTests {
    @Test func pages_walkEveryChangeOnce_andFiltersSelect() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        _ = try blair.get("/api/me")
        let start = try ChangeLogTests.position(ash)
        let root = try ash.createPost("root")
        let other = try ash.createPost("other")
        var children: [Int] = []
        for index in 0..<12 { children.append(try ash.createPost("child \(index)", parent: root.id).id) }
        for child in children.prefix(4) { _ = try blair.send("PUT", "/api/posts/\(child)/like") }
        _ = try blair.send("POST", "/api/posts/\(root.id)/comments", json: ["body": "on root"])
        _ = try ash.send("POST", "/api/posts/reparent", json: ["post_id": children[0], "parent_id": other.id])
        _ = try ash.send("POST", "/api/posts/reparent", json: ["post_id": other.id, "parent_id": root.id])

        let all = try ChangeLogTests.changes(after: start, in: ash, count: 21)
        #expect(all.count == 21)
        let paged = try ChangeLogTests.changes(after: start, in: ash, limit: 5, count: 21)
        #expect(paged.map { $0["seq"] as? String } == all.map { $0["seq"] as? String })

        // Every change is deliverable now (all 21 came): filtered walks see their final set.
        func types(_ query: String) throws -> [String] {
            try ChangeLogTests.changes(after: start, in: ash, query: query).changes.compactMap { $0["type"] as? String }
        }
        // post_id: the post itself, its children, likes and comments of both.
        // (root, its 12 children, 4 likes on them, its comment, the post moved in under it)
        let underRoot = try types("&post_id=\(root.id)")
        #expect(underRoot.count == 19)
        // parent_id: its direct children (and their likes), one reparented away included.
        let childrenOfRoot = try types("&parent_id=\(root.id)")
        #expect(childrenOfRoot.count == 18)
        #expect(try types("&parent_id=\(other.id)") == ["post.updated"])
        // root: root posts (and what happens to them), and a root moved under another post.
        let roots = try types("&parent_id=root")
        #expect(roots == ["post.created", "post.created", "comment.created", "post.updated"])
        let blairID = try #require((try blair.get("/api/me").json["user"] as? [String: Any])?["id"] as? Int)
        let byBlair = try types("&user_id=\(blairID)")
        #expect(byBlair == ["like.changed", "like.changed", "like.changed", "like.changed", "comment.created"])
        let ashsRoots = try types("&user_id=\(root["user_id"] as! Int)&parent_id=root")
        #expect(ashsRoots == ["post.created", "post.created", "post.updated"])
    }

    @Test func badParameters_are400() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        for query in ["since=nope", "since=AAAA", "limit=0", "limit=1001", "post_id=x", "parent_id=-1", "user_id=1.5"] {
            #expect(try client.get("/api/changes?\(query)").status == 400, "\(query)")
        }
        #expect(try client.get("/api/changes?limit=1000").status == 200)
    }

    /// After retention, a cursor from before what was pruned is 410 (and so is a resume of
    /// the event stream); a cursor after it is fine.
    @Test func cursorBehindRetention_is410() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        // The job's rounds are held first: one running at the same time holds the turn, and
        // one running late (on a loaded machine) after the change below is aged prunes it
        // before the explicit round does (both seen on a loaded CI).
        app.jobs.hold([.changesPrune])
        let ash = try APIClient.user("ash@example.com", on: app)
        let start = try ChangeLogTests.position(ash)
        _ = try ash.createPost("old")
        let old = try ChangeLogTests.changes(after: start, in: ash, count: 1)
        let afterOld = try #require(old.first?["seq"] as? String)
        _ = try ash.createPost("new")
        _ = try ChangeLogTests.changes(after: afterOld, in: ash, count: 1)
        try app.pool.withConnection { connection in
            _ = try connection.query("UPDATE changes SET at = at - interval '8 days' WHERE data::text LIKE '%\"old\"%'")
        }
        #expect(try app.changePruner.pruneOnce() == 1)
        let gone = try ash.get("/api/changes?since=\(start)")
        #expect(gone.status == 410)
        #expect(gone.json["error"] as? String == "gone")
        #expect(try ash.get("/api/events?since=\(start)").status == 410)
        let kept = try ash.get("/api/changes?since=\(afterOld)")
        #expect((kept.json["changes"] as? [[String: Any]])?.count == 1)
    }

    /// A cursor ahead of anything this database handed out (another database's, or one from
    /// before a restore into a new cluster) would silently miss changes: it is 410, as is
    /// a resume of the event stream from it. The newest cursor given out stays good.
    @Test func cursorAheadOfTheDatabase_is410() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let start = try ChangeLogTests.position(ash)
        _ = try ash.createPost("one")
        let newest = try ChangeLogTests.changes(after: start, in: ash, count: 1).last?["seq"] as? String
        let current = try ChangeKey(try #require(newest))
        let ahead = ChangeKey(txid: current.txid + 1_000_000, position: 1).text
        let gone = try ash.get("/api/changes?since=\(ahead)")
        #expect(gone.status == 410, "\(gone.text)")
        #expect(gone.json["error"] as? String == "gone")
        #expect(try ash.get("/api/events", headers: ["Last-Event-ID": ahead]).status == 410)
        #expect(try ash.get("/api/changes?since=\(try #require(newest))").status == 200)
        #expect(try ash.get("/api/changes?since=\(start)").status == 200)
    }

    /// The README's step after restoring a backup: every cursor from before it is 410, and
    /// following goes on from a fresh one.
    @Test func readmeRestoreStep_makesEveryEarlierCursorGone() throws {
        // A cluster of its own: in the shared one, another test's transaction open across
        // the watermark holds the horizon below it, and the fresh position after the step
        // is 410 too until it ends (a restore runs with no server, so nothing is open then).
        let (cluster, conninfo) = try TestDatabase.isolatedEmptyDatabase()
        defer { try? cluster.stop() }
        try Migrator(directory: TestDatabase.migrationsDirectory).migrate(conninfo: conninfo)
        let app = try TestApplication.start(cluster: .changes, conninfo: conninfo)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let start = try ChangeLogTests.position(ash)
        _ = try ash.createPost("before the backup")
        let seen = try #require(ChangeLogTests.changes(after: start, in: ash, count: 1).last?["seq"] as? String)
        try app.pool.withConnection { connection in
            try connection.execute(unsafeSQL: "TRUNCATE changes, changes_pruned")
            try connection.execute(unsafeSQL: "INSERT INTO changes_pruned (txid, position) VALUES (pg_current_xact_id(), 0)")
        }
        for cursor in [start, seen] {
            #expect(try ash.get("/api/changes?since=\(cursor)").status == 410)
        }
        let fresh = try ChangeLogTests.position(ash)
        _ = try ash.createPost("after the restore")
        let after = try ChangeLogTests.changes(after: fresh, in: ash, count: 1)
        #expect((after.first?["post"] as? [String: Any])?["title"] as? String == "after the restore")
    }

    /// A transaction that started first but commits last: while it is open, nothing after
    /// it is delivered (the horizon holds), and once it commits, a follower that kept
    /// polling and a walk from the start see the same sequence, with its change in it.
    @Test func outOfOrderCommits_areNeverSkipped() throws {
        // A cluster of its own: the transaction it holds open would hold back every other
        // test's changes, and theirs would blur the exact sequence it checks.
        let (cluster, conninfo) = try TestDatabase.isolatedEmptyDatabase()
        defer { try? cluster.stop() }
        try Migrator(directory: TestDatabase.migrationsDirectory).migrate(conninfo: conninfo)
        let app = try TestApplication.start(conninfo: conninfo)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let userID = try #require((try ash.get("/api/me").json["user"] as? [String: Any])?["id"] as? Int)
        let start = try ChangeLogTests.position(ash)
        var followed: [String] = []
        var cursor = start
        func follow() throws {
            let (changes, next) = try ChangeLogTests.changes(after: cursor, in: ash)
            followed += changes.compactMap { $0["seq"] as? String }
            cursor = next
        }

        // The slow writer: its xid is taken first, its change committed last.
        let slow = try PostgresConnection(conninfo: app.configuration.directDatabaseURL!)
        try slow.execute(unsafeSQL: "BEGIN")
        try slow.query("SELECT pg_current_xact_id()")
        _ = try ash.createPost("committed while the slow one runs")
        try follow()
        #expect(followed.isEmpty)
        try slow.query("""
            INSERT INTO changes (type, post_id, parent_id, user_id, data)
            VALUES ('post.updated', NULL, NULL, \(Int64(userID)), json_build_object('slow', true))
            """)
        _ = try ash.createPost("another")
        try follow()
        #expect(followed.isEmpty)
        try slow.execute(unsafeSQL: "COMMIT")
        try follow()
        _ = try ash.createPost("after")
        try follow()
        let walked = try ChangeLogTests.changes(after: start, in: ash).changes
        #expect(walked.count == 4)
        #expect(walked.first?["type"] as? String == "post.updated")
        #expect(followed == walked.compactMap { $0["seq"] as? String })
    }
}
