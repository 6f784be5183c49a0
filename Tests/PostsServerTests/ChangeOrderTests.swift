import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// Changes about the same state are delivered in the order their writes committed, also
/// across a delete of a whole subtree (see ChangeLog).
@Suite struct ChangeOrderTests {
    /// A like on a post deep in a subtree is in flight (it waits for the post's lock, held
    /// here) when the subtree's root is deleted: the delete waits for it, so the like's
    /// change comes before the delete's, and the delete removes what is there after it.
    @Test func deleteOfASubtree_waitsForWritesInsideIt_andComesAfterThem() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let start = try ChangeLogTests.position(ash)
        let root = try ash.createPost("root")
        let middle = try ash.createPost("middle", parent: root.id)
        let leaf = try ash.createPost("leaf", parent: middle.id)

        let holder = try PostgresConnection(conninfo: app.configuration.directDatabaseURL!)
        defer { holder.close() }
        _ = try holder.query("BEGIN")
        _ = try holder.query("SELECT pg_advisory_xact_lock(\(Int64(leaf.id)))")
        let port = app.server.port
        let done = DispatchGroup()
        let statuses = Statuses()
        for (name, method, path) in [("like", "PUT", "/api/posts/\(leaf.id)/like"), ("delete", "DELETE", "/api/posts/\(root.id)")] {
            if name == "delete" {
                // The like holds the tree shared and waits for the leaf: wait until it does.
                #expect(try Self.waitForWaiters(1, on: holder))
            }
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                let client = try? APIClient(port: port)
                client?.headers["X-User-Email"] = "ash@example.com"
                let status = (try? client?.send(method, path))??.status ?? 0
                statuses.set(name, status)
            }
        }
        #expect(try Self.waitForWaiters(2, on: holder))
        _ = try holder.query("COMMIT")
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(statuses.all == ["like": 200, "delete": 200])

        let changes = try ChangeLogTests.changes(after: start, in: ash, count: 5)
        #expect(changes.map { $0["type"] as? String } == ["post.created", "post.created", "post.created", "like.changed", "post.deleted"])
        #expect(Set(changes.last?["deleted_ids"] as? [Int] ?? []) == [root.id, middle.id, leaf.id])
    }

    final class Statuses: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [String: Int] = [:]
        func set(_ name: String, _ status: Int) { lock.withLock { values[name] = status } }
        var all: [String: Int] { lock.withLock { values } }
    }

    /// Until `count` advisory locks are waited for in this database (10 s at most).
    static func waitForWaiters(_ count: Int, on connection: PostgresConnection) throws -> Bool {
        try eventually(timeout: .seconds(30)) {
            let waiting: Int = try connection.query("""
                SELECT count(*)::int AS waiting FROM pg_locks l JOIN pg_database d ON d.oid = l.database
                WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = current_database()
                """).first!.decode("waiting")
            return waiting >= count
        }
    }
}
