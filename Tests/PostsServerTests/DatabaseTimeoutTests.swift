import Dispatch
import Foundation
import HTTP
import Postgres
import PostsServer
import Synchronization
import Testing
import TestSupport

/// One table locked for a long time: the requests that need it answer 503 once the
/// statement timeout cancels their wait, while every other request keeps answering 200.
@Suite struct DatabaseTimeoutTests {
    private static let lockHeld = Duration.seconds(9)

    @Test func lockedTable_costsOnlyItsOwnRequestsA503() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let pool = ConnectionPool(ConnectionPool.Configuration(conninfo: conninfo, size: 4))
        defer { pool.close() }
        let server = try TestHTTPServer.start { router in
            router.get("/locked") { _, _ in
                let count: Int = try pool.withConnection { try $0.query("SELECT count(*) AS n FROM posts").first!.decode("n") }
                return Response.json(Array(#"{"status":"success","count":\#(count)}"#.utf8))
            }
            router.get("/api/health") { _, _ in
                _ = try pool.withConnection { try $0.query("SELECT 1 AS ok") }
                return Response.json(Array(#"{"status":"success","database":"ok"}"#.utf8))
            }
        }
        defer { server.stop() }

        let locker = try PostgresConnection(conninfo: conninfo, queryTimeout: .zero)
        try locker.execute(unsafeSQL: "BEGIN; LOCK TABLE posts IN ACCESS EXCLUSIVE MODE")
        let lockedAt = ContinuousClock.now
        let health = Self.pollHealth(port: server.port, until: lockedAt + Self.lockHeld)

        let client = try RawHTTPClient(port: server.port, timeout: .seconds(10))
        for _ in 0..<2 {
            let started = ContinuousClock.now
            let locked = try client.exchange("GET /locked HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let waited = ContinuousClock.now - started
            #expect(locked.status == 503)
            #expect(locked.json["error"] as? String == "unavailable")
            #expect(locked.header("Retry-After") != nil)
            #expect(waited >= .milliseconds(2500) && waited < .seconds(4), "answered after \(waited)")
            #expect(!pool.isDatabaseDown)
        }

        let statuses = try #require(health.wait(), "the health poller did not finish")
        try locker.execute(unsafeSQL: "ROLLBACK")
        #expect(ContinuousClock.now - lockedAt >= Self.lockHeld)
        #expect(statuses.count >= 40, "only \(statuses.count) health checks")
        #expect(statuses.allSatisfy { $0 == 200 }, "health answered \(Set(statuses))")
        #expect(try client.exchange("GET /locked HTTP/1.1\r\nHost: localhost\r\n\r\n").status == 200)
    }

    /// The statuses of `/api/health` asked about every 100 ms on a client of its own, until
    /// `deadline`; a failed exchange counts as -1.
    private static func pollHealth(port: Int, until deadline: ContinuousClock.Instant) -> Poller {
        let poller = Poller()
        DispatchQueue.global().async {
            var statuses: [Int] = []
            do {
                let client = try RawHTTPClient(port: port)
                while ContinuousClock.now < deadline {
                    statuses.append(try client.exchange("GET /api/health HTTP/1.1\r\nHost: localhost\r\n\r\n").status)
                    Thread.sleep(forTimeInterval: 0.1)  // the polling pace, not a synchronisation
                }
            } catch {
                statuses.append(-1)
            }
            poller.finish(statuses)
        }
        return poller
    }

    private final class Poller: Sendable {
        private let statuses = Mutex<[Int]>([])
        private let done = DispatchSemaphore(value: 0)

        func finish(_ seen: [Int]) {
            statuses.withLock { $0 = seen }
            done.signal()
        }

        /// The statuses, or nil if the poller is still going long after it should have stopped.
        func wait() -> [Int]? {
            guard done.wait(timeout: .now() + .seconds(30)) == .success else { return nil }
            return statuses.withLock { $0 }
        }
    }
}
