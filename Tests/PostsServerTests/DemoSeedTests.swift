import Postgres
import PostsServer
import Testing
import TestSupport

@Suite struct DemoSeedTests {
    @Test func seed_runsOnceWithExactCounters() throws {
        let pool = ConnectionPool(ConnectionPool.Configuration(conninfo: try TestDatabase.makeDatabase(), size: 1))
        #expect(try DemoSeed.seedIfEmpty(pool))
        #expect(try !DemoSeed.seedIfEmpty(pool))
        let mismatches: Int = try pool.withConnection { connection in
            try connection.query("""
                SELECT count(*) AS n FROM posts p
                WHERE child_count <> (SELECT count(*) FROM posts c WHERE c.parent_id = p.id)
                   OR like_count <> (SELECT count(*) FROM likes l WHERE l.post_id = p.id)
                   OR comment_count <> (SELECT count(*) FROM comments m WHERE m.post_id = p.id)
                """).first!.decode("n")
        }
        #expect(mismatches == 0)
        let posts: Int = try pool.withConnection { try $0.query("SELECT count(*) AS n FROM posts").first!.decode("n") }
        #expect(posts >= 3)
    }
}
