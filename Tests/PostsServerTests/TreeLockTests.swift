import Dispatch
import Foundation
import Locking
import Postgres
import PostsServer
import Testing
import TestSupport

/// Deletes and moves lock the posts they depend on, not the whole tree: they still never
/// race a write about those posts, and no longer hold up writes anywhere else.
@Suite struct TreeLockTests {
    /// Two moves that share no post but would together make a loop (X under Y while Y's
    /// grandparent U goes under X's child W) never both succeed.
    @Test func crossingMovesUnderDifferentParents_neverLeaveACycle() throws {
        let app = try TestApplication.start { $0.databasePoolSize = 4 }
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        for _ in 0..<10 {
            let p = try ash.createPost("p").id, q = try ash.createPost("q").id
            let x = try ash.createPost("x", parent: p).id, u = try ash.createPost("u", parent: q).id
            let w = try ash.createPost("w", parent: x).id, y = try ash.createPost("y", parent: u).id
            let statuses = ParkingLock<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                let (post, parent) = index == 0 ? (x, y) : (u, w)
                let client = try? APIClient.user("ash@example.com", on: app)
                let status = (try? client?.send("POST", "/api/posts/reparent", json: ["post_id": post, "parent_id": parent]))??.status
                statuses.withLock { $0.append(status ?? -1) }
            }
            #expect(statuses.withLock { $0 }.sorted() == [200, 409])
        }
    }

    /// A delete waiting for a write inside its subtree holds up nothing outside it.
    @Test func deleteWaitingInsideItsSubtree_leavesOtherPostsFree() throws {
        let app = try TestApplication.start { $0.databasePoolSize = 4 }
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let root = try ash.createPost("root")
        let leaf = try ash.createPost("leaf", parent: root.id)
        let elsewhere = try ash.createPost("elsewhere")

        let holder = try PostgresConnection(conninfo: app.configuration.directDatabaseURL!)
        defer { holder.close() }
        _ = try holder.query("BEGIN")
        // What a like of the leaf holds while it runs: the tree shared, then the leaf.
        _ = try holder.query("""
            SELECT pg_advisory_xact_lock_shared(\(Int32(0x7472_6565)), \(Int32(0x0063_6867))),
                   pg_advisory_xact_lock(\(Int64(leaf.id)))
            """)
        let port = app.server.port
        let rootID = root.id
        let deleted = DispatchGroup()
        let statuses = ChangeOrderTests.Statuses()
        deleted.enter()
        Thread.detachNewThread {
            defer { deleted.leave() }
            let client = try? APIClient(port: port)
            client?.headers["X-User-Email"] = "ash@example.com"
            statuses.set("delete", (try? client?.send("DELETE", "/api/posts/\(rootID)"))??.status ?? 0)
        }
        #expect(try ChangeOrderTests.waitForWaiters(1, on: holder))

        // Writes about other posts go through while the delete waits.
        #expect(try ash.send("PUT", "/api/posts/\(elsewhere.id)/like").status == 200)
        #expect(try ash.createPost("another", parent: elsewhere.id)["title"] as? String == "another")
        #expect(statuses.all["delete"] == nil)

        _ = try holder.query("COMMIT")
        #expect(deleted.wait(timeout: .now() + 20) == .success)
        #expect(statuses.all["delete"] == 200)
        #expect(try ash.get("/api/posts/\(leaf.id)").status == 404)
    }
}
