import Foundation
import Testing
import TestSupport

/// Live events across server processes on one database, and their end on SIGTERM, against
/// the built executable.
@Suite struct EventInstancesTests {
    private static func startInstance(_ conninfo: String, migrate: Bool) throws -> (ServerProcess, Int) {
        var arguments = ["serve"]
        if !migrate { arguments.append("--no-migrate") }
        let process = try ServerProcess(arguments, environment: [
            "DATABASE_URL": conninfo, "PORT": "0", "AUTH_MODE": "trust",
            "MIGRATIONS_DIR": TestDatabase.migrationsDirectory.path])
        return (process, try #require(process.listeningPort()))
    }

    /// A write on one instance reaches a subscriber of the other through PostgreSQL alone,
    /// within a second.
    @Test func writeOnOneInstance_reachesASubscriberOfAnother() throws {
        // A cluster of its own: another test's open transaction holds back delivery in the
        // whole cluster (the horizon), which is not what this one times.
        let (cluster, conninfo) = try TestDatabase.isolatedEmptyDatabase()
        defer { try? cluster.stop() }
        let (first, firstPort) = try Self.startInstance(conninfo, migrate: true)
        let (second, secondPort) = try Self.startInstance(conninfo, migrate: false)
        let events = try EventStreamClient(port: secondPort)
        _ = try events.next()
        let writer = try APIClient(port: firstPort)
        writer.headers["X-User-Email"] = "ash@example.com"
        for title in ["one", "two", "three"] {
            let written = ContinuousClock.now
            let created = try writer.send("POST", "/api/posts", json: ["title": title, "summary": "s", "body": "b"])
            #expect(created.status == 201)
            let event = try events.nextChange()
            #expect(event.type == "post.created")
            #expect((event.json["post"] as? [String: Any])?["title"] as? String == title)
            #expect(ContinuousClock.now - written < .seconds(1))
        }
        for process in [first, second] {
            process.signal(SIGTERM)
            #expect(process.waitForExit() == 0)
        }
    }

    /// Open streams do not hold up a deploy: SIGTERM ends them at once and the server exits 0.
    @Test func sigterm_endsOpenStreamsAtOnce_andExitsZero() throws {
        let conninfo = try TestDatabase.makeEmptyDatabase()
        let (process, port) = try Self.startInstance(conninfo, migrate: true)
        let streams = try (0..<3).map { _ in try EventStreamClient(port: port) }
        for stream in streams { _ = try stream.next() }
        let signalled = ContinuousClock.now
        process.signal(SIGTERM)
        for stream in streams { #expect(stream.waitForEnd()) }
        #expect(process.waitForExit(timeout: .seconds(5)) == 0)
        #expect(ContinuousClock.now - signalled < .seconds(2))
    }
}
