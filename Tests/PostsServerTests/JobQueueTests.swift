import Foundation
import Logging
import Postgres
@testable import PostsServer
import Synchronization
import Testing
import TestSupport

/// The job queue against a real database, with kinds and handlers of the test's own: a
/// job runs once when all goes well, again (same payload) when its runner died mid-try,
/// after its backoff when a try failed, and dies with its error when its window is over.
/// Timers are the test clock's: advanced, never waited out; the runner is drained
/// (`JobRunner.drain`), never watched.
@Suite struct JobQueueTests {
    /// A handler that records what it ran and answers what the test says.
    final class Recorder: JobHandler, @unchecked Sendable {
        let runs = Mutex<[(payload: String, attempts: Int)]>([])
        let answer: @Sendable (ClaimedJob) -> JobOutcome

        init(answer: @escaping @Sendable (ClaimedJob) -> JobOutcome = { _ in .done }) {
            self.answer = answer
        }

        func perform(_ jobs: [ClaimedJob], context: JobContext) throws -> [JobOutcome] {
            runs.withLock { $0 += jobs.map { ($0.payload, $0.attempts) } }
            return jobs.map(answer)
        }

        var count: Int { runs.withLock { $0.count } }
    }

    static let kind = JobKind(name: "test.record", batch: 5, leaseSeconds: 120, windowSeconds: 60,
                              firstBackoffSeconds: 1, maxBackoffSeconds: 10)

    private static func runner(_ recorder: Recorder, conninfo: String, clock: ServerClock,
                               died: (@Sendable ([String], JobContext) throws -> Void)? = nil) -> JobRunner {
        var logger = Logger(label: "jobs-test")
        logger.logLevel = .critical
        return JobRunner(workers: [JobWorker(kind: kind, makeHandler: { _ in recorder }, died: died)],
                         conninfo: conninfo, clock: clock, logger: logger)
    }

    private static func enqueue(_ payloads: [String], conninfo: String) throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        let objects = payloads.map { text -> JSONObject in
            var object = JSONObject()
            object.add("text", text)
            return object
        }
        try JobQueue.enqueue(kind, payloads: objects, clock: ServerClock(), on: connection)
    }

    private static func jobs(_ conninfo: String) throws -> [(state: String, attempts: Int, error: String?)] {
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        return try connection.query("SELECT state, attempts, last_error FROM jobs ORDER BY id").rows.map {
            (try $0.decode("state"), try $0.decode("attempts"), try $0.decode("last_error"))
        }
    }

    @Test func aJob_runsOnce_andIsGone() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let recorder = Recorder()
        let runner = Self.runner(recorder, conninfo: conninfo, clock: ServerClock())
        runner.start()
        defer { runner.stop() }
        try Self.enqueue(["one", "two"], conninfo: conninfo)
        #expect(try runner.drain())
        #expect(try Self.jobs(conninfo).isEmpty)
        #expect(recorder.runs.withLock { $0.map(\.payload) } == [#"{"text":"one"}"#, #"{"text":"two"}"#])
        #expect(recorder.runs.withLock { $0.map(\.attempts) } == [1, 1])
        #expect(runner.statistics.counters(of: Self.kind).done == 2)
    }

    /// A runner that claimed a job and died (no outcome recorded) holds it only for its
    /// lease: then another runner takes it, with the same payload, as its second try.
    @Test func aJobWhoseRunnerDied_runsAgainAfterTheLease_withTheSamePayload() throws {
        let conninfo = try TestDatabase.makeDatabase()
        try Self.enqueue(["stable"], conninfo: conninfo)
        let clock = ServerClock()
        let crashed = ConnectionPool(ConnectionPool.Configuration(conninfo: conninfo, size: 1))
        defer { crashed.close() }
        let claimed = try JobQueue(pool: crashed, clock: clock).claim(Self.kind)
        #expect(claimed.count == 1)

        let recorder = Recorder()
        let runner = Self.runner(recorder, conninfo: conninfo, clock: clock)
        runner.start()
        defer { runner.stop() }
        runner.wake()
        #expect(try Self.jobs(conninfo).first?.state == "running")
        #expect(recorder.count == 0, "the lease holds")
        clock.advance(by: .seconds(Self.kind.leaseSeconds))
        #expect(try runner.drain())
        #expect(try Self.jobs(conninfo).isEmpty)
        #expect(recorder.runs.withLock { $0.map(\.payload) } == [claimed[0].payload])
        #expect(recorder.runs.withLock { $0.map(\.attempts) } == [2])
    }

    /// A failed try waits its backoff (1 s, 2 s, 4 s …) and keeps its error; past the window
    /// the next failure kills the job, which stays for the operator with its error, and the
    /// kind hears of it.
    @Test func failures_backOff_andDieWithTheirErrorAfterTheWindow() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let clock = ServerClock()
        let recorder = Recorder { _ in .retry("far side down") }
        let died = Mutex<[String]>([])
        let runner = Self.runner(recorder, conninfo: conninfo, clock: clock) { payloads, _ in
            died.withLock { $0 += payloads }
        }
        runner.start()
        defer { runner.stop() }
        try Self.enqueue(["doomed"], conninfo: conninfo)
        for attempt in 1...3 {
            // Drained: tried, failed, and waiting out its backoff (not due).
            #expect(try runner.drain(), "try \(attempt)")
            let job = try Self.jobs(conninfo).first
            #expect(job?.attempts == attempt && job?.state == "queued", "try \(attempt)")
            #expect(job?.error == "far side down")
            clock.advance(by: .seconds(Self.kind.backoffSeconds(afterAttempt: attempt)))
        }
        // Past the window: the try due at its end is the last.
        clock.advance(by: .seconds(Self.kind.windowSeconds!))
        #expect(try runner.drain())
        #expect(try Self.jobs(conninfo).first?.state == "dead")
        #expect(try Self.jobs(conninfo).first?.error == "far side down")
        #expect(died.withLock { $0 } == [#"{"text":"doomed"}"#])
        #expect(runner.statistics.counters(of: Self.kind).died == 1)
    }

    /// Two runners on one queue share its jobs without running any twice.
    @Test func twoRunners_runEveryJobOnce() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let recorders = [Recorder(), Recorder()]
        let runners = recorders.map { Self.runner($0, conninfo: conninfo, clock: ServerClock()) }
        for runner in runners { runner.start() }
        defer { for runner in runners { runner.stop() } }
        let payloads = (0..<200).map { "job \($0)" }
        try Self.enqueue(payloads, conninfo: conninfo)
        // Each drain waits for the other runner's batches too.
        for runner in runners { #expect(try runner.drain()) }
        #expect(try Self.jobs(conninfo).isEmpty)
        let ran = recorders.flatMap { recorder in recorder.runs.withLock { $0.map(\.payload) } }
        #expect(ran.count == 200)
        #expect(Set(ran).count == 200)
    }

    /// What a runner gives back untried (it is stopping, or the far side failed an earlier
    /// job of the batch) is due again at once, its try not counted.
    @Test func untriedJobs_areDueAgainAtOnce_uncounted() throws {
        let conninfo = try TestDatabase.makeDatabase()
        let recorder = Recorder { job in job.payload.contains("first") ? .retry("down") : .untried }
        let runner = Self.runner(recorder, conninfo: conninfo, clock: ServerClock())
        try Self.enqueue(["first", "second"], conninfo: conninfo)
        runner.start()
        runner.wake()
        let settled = eventuallyValue(timeout: .seconds(20)) { () -> Bool? in
            // Settled once the try is recorded: its claim counts it before (attempts 1, no error yet).
            let jobs = try? Self.jobs(conninfo)
            return jobs?.first?.error != nil ? true : nil
        }
        runner.stop()
        #expect(settled == true)
        let jobs = try Self.jobs(conninfo)
        #expect(jobs.map(\.state) == ["queued", "queued"])
        #expect(jobs[0].error == "down" && jobs[1].error == nil)
        #expect(jobs[1].attempts == 0, "the untried job's claim was given back")
    }
}
