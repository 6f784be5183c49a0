import Foundation
import HTTP
import PostsServer
import Testing
import TestSupport

/// The firefly app with read replicas: it names its user in the body of a write and reads
/// anonymously, and sends no `Read-After`. Through the same instance it still reads its
/// own post at once, while the replica that others read has not replayed it (API.md "Many
/// databases": "still sees its own writes on its next reads through the same instance").
@Suite(.serialized) struct ReplicaFireflyTests {
    @Test func theAppReadsItsOwnPost_throughTheSameInstance_whileTheReplicaLags() throws {
        let deployment = try ReplicaDeployment.start(instances: 1, maxLag: .seconds(120)) {
            $0.trustedProxies = try! TrustedProxies(parsing: "127.0.0.1/32")
        }
        defer { deployment.stop() }
        #expect(try deployment.waitUntilMeasuredCaughtUp())
        try deployment.replica.pauseReplay()
        defer { try? deployment.replica.run("SELECT pg_wal_replay_resume()") }

        let phone = try APIClient(port: deployment.apps[0].server.port)
        phone.headers["X-Forwarded-For"] = "198.51.100.7"
        var form = MultipartBody()
        for (name, value) in [("email", "ash@example.com"), ("title", "Fresh"), ("summary", "s"), ("body", "b"),
                              ("timezone", "UTC"), ("parent_id", "")] {
            form.field(name, value)
        }
        let created = try phone.send("POST", "/api/posts/create", body: form.finished, contentType: MultipartBody.contentType)
        #expect(created.status == 201 && created.header("Read-After") != nil)
        let id = try #require((created.json["post"] as? [String: Any])?["id"] as? Int)

        let recent = try phone.get("/api/posts/recent?limit=50").json["posts"] as? [[String: Any]] ?? []
        #expect(recent.first?["id"] as? Int == id)
        #expect(try phone.get("/api/posts/\(id)").status == 200)
        // Someone else, elsewhere, reads the replica: not there yet.
        let other = try APIClient(port: deployment.apps[0].server.port)
        other.headers["X-Forwarded-For"] = "198.51.100.8"
        #expect(try other.get("/api/posts/\(id)").status == 404)
    }
}
