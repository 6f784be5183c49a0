import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// A live subscriber still catching up when pruning passes its cursor is cut off rather
/// than handed a stream with a gap; its resume is then 410 `gone`. (The feed learns it
/// from the retention mark its catch-up page reads, not from a query of its own.)
@Suite struct EventRetentionTests {
    @Test func subscriberOvertakenByPruning_isCutOff_andItsResumeIs410() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        app.jobs.hold([.changesPrune])
        let ash = try APIClient.user("ash@example.com", on: app)
        let start = try ChangeLogTests.position(ash)
        _ = try ash.createPost("old")
        _ = try ChangeLogTests.changes(after: start, in: ash, count: 1)

        // While this lock is held the feed waits on its next read of `changes`: the stream
        // below is admitted (its cursor still kept) but not caught up.
        let pruning = try PostgresConnection(conninfo: try #require(app.configuration.directDatabaseURL))
        defer { pruning.close() }
        try pruning.execute(unsafeSQL: "BEGIN; LOCK TABLE changes IN ACCESS EXCLUSIVE MODE")
        let stream = try EventStreamClient(port: app.server.port, query: "since=\(start)", timeout: .seconds(10))
        #expect(stream.head.status == 200)
        #expect(try stream.next().text.hasPrefix("retry:"))
        // What the pruner does once "old" is past retention, committed before the feed reads.
        try pruning.execute(unsafeSQL: """
            WITH gone AS (DELETE FROM changes RETURNING txid, position),
                 highest AS (SELECT txid, position FROM gone ORDER BY txid DESC, position DESC LIMIT 1)
            INSERT INTO changes_pruned (txid, position) SELECT txid, position FROM highest
            ON CONFLICT (singleton) DO UPDATE SET txid = excluded.txid, position = excluded.position;
            COMMIT
            """)
        #expect(stream.waitForEnd(), "the stream was not cut off")
        let resumed = try ash.get("/api/events?since=\(start)")
        #expect(resumed.status == 410)
        #expect(resumed.json["error"] as? String == "gone")
    }
}
