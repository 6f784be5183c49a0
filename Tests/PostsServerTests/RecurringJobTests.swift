import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// The pruners as recurring jobs of the one queue (migration 0024): each recurring kind has
/// exactly one pending job, however many instances share the database; it runs a round and
/// is queued again a period later; a runner that died leaves it to another after its lease
/// (and its late outcome changes nothing); a dev reset that empties the table or a clock set
/// back loses no round. Times are the test clock's, advanced; the runners are drained.
@Suite struct RecurringJobTests {
    static let kinds: [JobKind] = [.changesPrune, .upkeepPrune]

    struct Job {
        let kind: String
        let state: String
        let attempts: Int
        let payload: String
        /// Seconds from the clock's now until it is due (or its lease ends).
        let dueIn: Double
    }

    private static func recurring(in app: Application) throws -> [Job] {
        try app.pool.withConnection { connection in
            try connection.query("""
                SELECT kind, state, attempts, payload::text AS payload,
                       extract(epoch FROM run_at - \(app.clock.now))::float8 AS due_in
                FROM jobs WHERE recurring ORDER BY kind
                """).rows.map {
                Job(kind: try $0.decode("kind"), state: try $0.decode("state"), attempts: try $0.decode("attempts"),
                    payload: try $0.decode("payload"), dueIn: try $0.decode("due_in"))
            }
        }
    }

    private static func done(_ kind: JobKind, in apps: [Application]) -> Int {
        apps.reduce(0) { $0 + $1.jobs.statistics.counters(of: kind).done }
    }

    @Test func eachPruner_hasOneJob_thatRunsARound_andIsDueAgainAPeriodLater() throws {
        let app = try TestApplication.start { $0.changesRetention = .seconds(3600) }
        defer { app.stop() }
        #expect(try app.jobs.drain())
        let jobs = try Self.recurring(in: app)
        #expect(jobs.map(\.kind) == ["changes.prune", "upkeep.prune"])
        #expect(jobs.allSatisfy { $0.state == "queued" && $0.dueIn > 0 && $0.dueIn <= 30 }, "\(jobs)")
        #expect(jobs.last?.payload.contains("swept_past") == true, "the caps' sweep keeps its place in the job")
        for kind in Self.kinds { #expect(Self.done(kind, in: [app]) >= 1, "\(kind)") }

        // A round removes what the clock put past retention: the advance makes the job due.
        _ = try APIClient.user("ash@example.com", on: app).createPost("kept an hour")
        let before = Self.done(.changesPrune, in: [app])
        app.clock.advance(by: .seconds(3601))
        #expect(try app.jobs.drain())
        #expect(Self.done(.changesPrune, in: [app]) > before)
        let left = try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM changes").firstRow().decode("n", as: Int.self) }
        #expect(left == 0)
        #expect(try Self.recurring(in: app).count == 2, "still one job per kind")
    }

    /// Instances sharing a database queue one job per kind between them, even inserting at
    /// the same moment, and a round is run by one of them, never by both.
    @Test func twoInstances_shareOneJobPerKind_andRunEachRoundOnce() throws {
        let clock = ServerClock()
        let first = try TestApplication.start(clock: clock)
        defer { first.stop() }
        let second = try TestApplication.start(conninfo: first.configuration.databaseURL, clock: clock)
        defer { second.stop() }
        let queue = JobQueue(pool: first.pool, clock: clock)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in _ = try? queue.keepRecurring(Self.kinds) }
        for _ in 0..<2 {
            for app in [first, second] { #expect(try app.jobs.drain()) }
            clock.advance(by: .seconds(30))
        }
        for app in [first, second] { #expect(try app.jobs.drain()) }
        // Nothing in flight while counting: each run was one claim (one attempt) by one runner.
        for app in [first, second] { app.jobs.hold(Self.kinds) }
        let jobs = try Self.recurring(in: first)
        #expect(jobs.map(\.kind) == ["changes.prune", "upkeep.prune"])
        for (kind, job) in zip(Self.kinds, jobs) {
            #expect(Self.done(kind, in: [first, second]) >= 3, "\(kind)")
            #expect(job.attempts == Self.done(kind, in: [first, second]), "\(kind): every claim ran once, on one instance")
        }
    }

    /// A runner that claimed the job and died holds it for its lease only; its outcome, told
    /// late, is not taken (the job is another runner's by then).
    @Test func aJobWhoseRunnerDied_runsAgainAfterItsLease_once() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        #expect(try app.jobs.drain())
        app.jobs.hold([.upkeepPrune])
        app.clock.advance(by: .seconds(30))
        let crashed = ConnectionPool(ConnectionPool.Configuration(conninfo: try #require(app.configuration.databaseURL), size: 1))
        defer { crashed.close() }
        let dead = JobQueue(pool: crashed, clock: app.clock)
        let claimed = try dead.claim(.upkeepPrune)
        #expect(claimed.count == 1)
        app.jobs.release([.upkeepPrune])
        #expect(try app.jobs.drain([.changesPrune]))
        #expect(try Self.recurring(in: app).last?.state == "running", "the lease holds")

        app.clock.advance(by: .seconds(JobKind.upkeepPrune.leaseSeconds))
        #expect(try app.jobs.drain())
        try dead.record([(claimed[0], .done)], of: .upkeepPrune)
        let job = try #require(try Self.recurring(in: app).last)
        #expect(job.kind == "upkeep.prune" && job.state == "queued" && job.attempts == 3, "\(job)")
        #expect(job.dueIn > 0 && job.dueIn <= 30, "due a period after the run that took over, not moved by the late outcome")
        #expect(Self.done(.upkeepPrune, in: [app]) == 2)
    }

    /// The table emptied by a dev reset: the runner queues the jobs again within seconds. A
    /// clock set back a day after a round: the next is not a day away.
    @Test func aReset_orAClockSetBack_losesNoRound() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        #expect(try app.jobs.drain())
        #expect(try APIClient(port: app.server.port).send("POST", "/api/dev/reset").status == 200)
        #expect(try eventually { try Self.recurring(in: app).count == 2 })

        app.clock.advance(by: .seconds(24 * 3600))
        #expect(try app.jobs.drain())
        let rounds = Self.kinds.map { Self.done($0, in: [app]) }
        app.clock.advance(by: .seconds(-24 * 3600))
        #expect(eventually { zip(Self.kinds, rounds).allSatisfy { Self.done($0, in: [app]) > $1 } })
        app.jobs.hold(Self.kinds)
        let jobs = try Self.recurring(in: app)
        #expect(jobs.count == 2 && jobs.allSatisfy { $0.state == "queued" && $0.dueIn <= 30 }, "\(jobs)")
    }
}
