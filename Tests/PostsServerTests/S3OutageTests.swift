import Foundation
import PostsServer
import Testing
import TestSupport

/// API.md: the store unreachable → uploads and image reads 503 with `Retry-After`, every
/// other route unaffected, health 200 with `"storage":"failing"`; deletions queued during
/// the outage happen after it, and service returns by itself. A store of its own, stopped
/// and started again on the same ports and data.
@Suite struct S3OutageTests {
    @Test func aStoreOutage_costs503sForImagesOnly_andEverythingReturns() throws {
        let store = try SeaweedStore()
        let prefix = SeaweedStore.makePrefix()
        let app = try S3StorageTests.start(store, prefix: prefix)
        defer { app.stop() }
        // Generous: the whole suite shares two cores with the store, and an upload is made first.
        let client = try APIClient(port: app.server.port, timeout: .seconds(30))
        let ash = try APIClient(port: app.server.port, timeout: .seconds(30))
        ash.headers["X-User-Email"] = "ash@example.com"
        let post = try client.createdPost(email: "ash@example.com", .smallJPEG)
        let id = try #require(post["id"] as? Int)
        let url = try #require(post["image_url"] as? String)

        store.stop()
        let upload = try client.createPost(email: "ash@example.com", .smallJPEG)
        #expect(upload.status == 503 && upload.json["error"] as? String == "unavailable", "\(upload.text)")
        #expect(upload.header("Retry-After") != nil)
        let read = try client.get(url)
        #expect(read.status == 503 && read.header("Retry-After") != nil)
        #expect(try client.get("\(url)?width=320").status == 503)
        let avatar = try ash.putAvatar(try ImageFixture.smallJPEG.bytes)
        #expect(avatar.status == 503)
        // Text and the database are untouched.
        #expect(try ash.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b"]).status == 201)
        #expect(try client.get("/api/posts/\(id)").status == 200)
        let health = try client.get("/api/health")
        #expect(health.status == 200 && health.json["storage"] as? String == "failing" && health.json["database"] as? String == "ok")
        // A deletion during the outage is kept, not lost.
        #expect(try ash.send("DELETE", "/api/posts/\(id)").status == 200)
        let metrics = MetricsProbe(port: app.server.port)
        #expect(try metrics.value("storage_requests_total{op=\"put\",result=\"unavailable\"}") ?? 0 >= 1)

        try store.start()
        // The deletion worker's probe notices the store is back, without any request.
        #expect(eventually(timeout: .seconds(20)) { (try? client.get("/api/health"))?.json["storage"] as? String == "ok" })
        #expect(try S3StorageTests.waitForObjects(store, prefix, [], timeout: .seconds(30)).isEmpty,
                "the deletion queued during the outage happened after it")
        // A restarted store may still refuse a put for a moment after it answers and deletes
        // (its S3 gateway and volume server reconnecting; under the whole suite's load, once
        // in a CI run): until then an upload is still the outage's 503. Whatever was refused
        // leaves nothing behind (the last check: exactly one object).
        let again = eventuallyValue(timeout: .seconds(30)) { () -> RawHTTPClient.Response? in
            let answer = try? client.createPost(email: "ash@example.com", .smallJPEG)
            return answer?.status == 503 ? nil : answer
        }
        #expect(again?.status == 201, "\(again?.text ?? "still 503")")
        let newURL = try #require((again?.json["post"] as? [String: Any])?["image_url"] as? String)
        #expect(try client.get(newURL).status == 200)
        #expect(try S3StorageTests.objects(store, prefix) == [uploadName(newURL)])
    }

    /// A store that is down when the server starts is an outage, not a refusal: the server
    /// starts, answers 503 for images, and serves them once the store is up.
    @Test func aStoreDownAtStart_isRiddenOut() throws {
        let store = try SeaweedStore()
        store.stop()
        let prefix = SeaweedStore.makePrefix()
        let app = try S3StorageTests.start(store, prefix: prefix)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port, timeout: .seconds(30))
        #expect(try client.createPost(email: "ash@example.com", .smallJPEG).status == 503)
        try store.start()
        // A store started for the first time takes writes once its volume server has
        // registered with its master (S3 answers before that, under load seconds before):
        // until then a put is still the outage's 503.
        let created = eventuallyValue(timeout: .seconds(30)) { () -> RawHTTPClient.Response? in
            let answer = try? client.createPost(email: "ash@example.com", .smallJPEG)
            return answer?.status == 503 ? nil : answer
        }
        #expect(created?.status == 201, "\(created?.text ?? "still 503")")
    }
}
