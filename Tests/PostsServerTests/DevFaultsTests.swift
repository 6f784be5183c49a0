import Foundation
import PostsServer
import Testing
import TestSupport

/// API.md "Faults": a fault made through one instance applies on every instance of the
/// database, to the requests its method and route pattern match, as often as `times` says
/// and as its seeded probability picks; never to `/api/dev/*`. What it does: the documented
/// error answer, latency, a dropped connection, and `after_commit` (done, answer lost).
@Suite struct DevFaultsTests {
    private static func fault(_ client: APIClient, _ body: [String: Any?]) throws -> [String: Any] {
        let made = try client.send("POST", "/api/dev/faults", json: body)
        #expect(made.status == 201, "\(made.text)")
        return made.json["fault"] as? [String: Any] ?? [:]
    }

    private static func hits(_ client: APIClient, of id: Int) throws -> Int? {
        let faults = try client.get("/api/dev/faults").json["faults"] as? [[String: Any]] ?? []
        return faults.first { $0["id"] as? Int == id }?["hits"] as? Int
    }

    @Test func aFaultMadeOnOneInstance_answersOnTheOther_asManyTimesAsAsked() throws {
        let (here, there) = try DevClockTests.pair()
        defer { here.stop(); there.stop() }
        let dev = try APIClient(port: here.server.port)
        let made = try Self.fault(dev, ["match": ["method": "POST", "path": "/api/posts"], "status": 503, "times": 2])
        let id = try #require(made["id"] as? Int)
        #expect((made["match"] as? [String: Any])?["path"] as? String == "/api/posts" && made["hits"] as? Int == 0)

        let author = try APIClient.user("ash@example.com", on: there)
        // Within a second, on the other instance: its first two posts fail as documented.
        #expect(try eventually { try author.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b"]).status == 503 })
        let second = try author.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b"])
        #expect(second.status == 503 && second.json["error"] as? String == "unavailable" && second.header("Retry-After") != nil)
        #expect(try author.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b"]).status == 201)
        // Other methods and paths are untouched.
        #expect(try author.get("/api/posts/recent").status == 200)
        #expect(try Self.hits(dev, of: id) == 2)

        #expect(try dev.send("DELETE", "/api/dev/faults/\(id)").status == 204)
        #expect(try dev.send("DELETE", "/api/dev/faults/\(id)").status == 404)
        #expect((try dev.get("/api/dev/faults").json["faults"] as? [Any])?.isEmpty == true)
    }

    @Test func patterns_matchSegments_theOldestApplies_andDevRoutesAreNeverTouched() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let dev = try APIClient(port: app.server.port)
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost("p").id
        _ = try Self.fault(dev, ["match": ["path": "/api/posts/*/like"], "status": 409])
        _ = try Self.fault(dev, ["match": ["path": "/**"], "status": 500])
        #expect(try ash.send("PUT", "/api/posts/\(post)/like").status == 409)
        #expect(try ash.get("/api/posts/recent").status == 500)
        #expect(try ash.get("/api/posts/\(post)").json["error"] as? String == "internal")
        // /api/dev/* is never faulted, whatever matches.
        #expect(try dev.get("/api/dev/faults").status == 200)
        #expect(try dev.send("DELETE", "/api/dev/faults").status == 204)
        #expect(try ash.get("/api/posts/recent").status == 200)
        // A reset clears them too.
        _ = try Self.fault(dev, ["match": ["path": "/**"], "status": 500])
        #expect(try dev.send("POST", "/api/dev/reset").status == 200)
        #expect(try dev.get("/api/posts/recent").status == 200)
    }

    @Test func aDrop_closesTheConnection_andLatencyIsWaitedFirst() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let dev = try APIClient(port: app.server.port)
        _ = try Self.fault(dev, ["match": ["method": "GET", "path": "/api/posts/recent"], "drop": true, "times": 1])
        let victim = try APIClient(port: app.server.port)
        #expect(throws: (any Error).self) { try victim.get("/api/posts/recent") }
        #expect(try APIClient(port: app.server.port).get("/api/posts/recent").status == 200)

        _ = try Self.fault(dev, ["match": ["path": "/api/ping"], "latency_ms": 300, "times": 1])
        let started = ContinuousClock.now
        #expect(try APIClient(port: app.server.port).get("/api/ping").status == 200)
        #expect(ContinuousClock.now - started >= .milliseconds(300))
    }

    @Test func afterCommit_doesTheWriteAndLosesTheAnswer_soAnIdempotencyKeyRetryGetsIt() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let dev = try APIClient(port: app.server.port)
        let ash = try APIClient.user("ash@example.com", on: app)
        _ = try Self.fault(dev, ["match": ["method": "POST", "path": "/api/posts"], "after_commit": true, "drop": true, "times": 1])
        let key = ["Idempotency-Key": "retry-1"]
        let body: [String: Any?] = ["title": "kept", "summary": "s", "body": "b"]
        let lost = try APIClient.user("ash@example.com", on: app)
        #expect(throws: (any Error).self) { try lost.send("POST", "/api/posts", json: body, headers: key) }
        // The retry with the same key gets the post made the first time, not a second one.
        let retried = try ash.send("POST", "/api/posts", json: body, headers: key)
        #expect(retried.status == 201, "\(retried.text)")
        #expect((try ash.get("/api/posts/recent").json["posts"] as? [Any])?.count == 1)

        // Without a key, with a status in place of the answer: the post is there all the same.
        _ = try Self.fault(dev, ["match": ["method": "POST", "path": "/api/posts"], "after_commit": true, "status": 503, "times": 1])
        #expect(try ash.send("POST", "/api/posts", json: ["title": "second", "summary": "s", "body": "b"]).status == 503)
        #expect((try ash.get("/api/posts/recent").json["posts"] as? [Any])?.count == 2)
    }

    @Test func theSameSeed_picksTheSameRequests() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let dev = try APIClient(port: app.server.port)
        let client = try APIClient(port: app.server.port)
        func picks() throws -> [Bool] {
            let id = try #require(try Self.fault(dev, ["match": ["path": "/api/ping"], "status": 503, "probability": 0.5,
                                                       "seed": 42])["id"] as? Int)
            defer { _ = try? dev.send("DELETE", "/api/dev/faults/\(id)") }
            return try (0..<40).map { _ in try client.get("/api/ping").status == 503 }
        }
        let first = try picks()
        #expect(first.contains(true) && first.contains(false))
        #expect(try picks() == first)
    }

    @Test func badInput_isA422_andMakesNoFault() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let dev = try APIClient(port: app.server.port)
        let bad: [[String: Any?]] = [
            [:], ["status": 503], ["match": ["path": "api/posts"], "status": 503],
            ["match": ["path": "/api/posts", "method": "BREW"], "status": 503],
            ["match": ["path": "/api/posts"], "status": 302], ["match": ["path": "/api/posts"]],
            ["match": ["path": "/api/posts"], "latency_ms": -1], ["match": ["path": "/api/posts"], "latency_ms": 600_000],
            ["match": ["path": "/api/posts"], "status": 503, "times": 0],
            ["match": ["path": "/api/posts"], "status": 503, "times": 2_147_483_648],
            ["match": ["path": "/api/posts"], "status": 503, "probability": 1.5],
            ["match": ["path": "/api/posts"], "after_commit": true, "latency_ms": 10],
            ["match": ["path": "/api/posts"], "status": 503, "drop": true],
        ]
        for body in bad {
            let answer = try dev.send("POST", "/api/dev/faults", json: body)
            #expect((400..<500).contains(answer.status), "\(body): \(answer.status) \(answer.text)")
        }
        #expect((try dev.get("/api/dev/faults").json["faults"] as? [Any])?.isEmpty == true)
        #expect(try dev.send("DELETE", "/api/dev/faults/999").status == 404)
        #expect(try dev.send("DELETE", "/api/dev/faults/abc").status == 404)
    }
}
