import Foundation
import PostsServer
import Testing
import TestSupport

/// API.md "Storage for many instances": images in an S3-compatible bucket (a real
/// SeaweedFS, started by the test support), every write before the commit, every deletion
/// through the durable queue, instances sharing nothing but the database and the bucket.
@Suite struct S3StorageTests {
    /// A server storing in `store` under `prefix`, its upload folder (temporaries only) its own.
    static func start(_ store: SeaweedStore, prefix: String, publicURL: String? = nil, conninfo: String? = nil,
                      secret: String? = nil) throws -> Application {
        try TestApplication.start(conninfo: conninfo) { configuration in
            configuration.storage = try? StorageSettings.parse(url: store.storageURL(prefix: prefix), accessKeyID: store.accessKey,
                                                               secretAccessKey: secret ?? store.secretKey, publicURL: publicURL)
        }
    }

    /// The stored images and sizes in the upload folder: none, with a bucket.
    static func localImages(_ app: Application) -> [String] {
        UploadFolder.files(app).filter { !$0.hasPrefix(".") }
    }

    static func objects(_ store: SeaweedStore, _ prefix: String) throws -> [String] {
        try store.keys(under: prefix).map { String($0.dropFirst(prefix.count + 1)) }
    }

    /// Waits for the bucket to hold exactly `expected` under `prefix` (deletions run after
    /// the commit, on the deletion worker).
    static func waitForObjects(_ store: SeaweedStore, _ prefix: String, _ expected: [String],
                               timeout: Duration = .seconds(15)) throws -> [String] {
        let expected = expected.sorted()
        return try eventuallyValue(timeout: timeout) { try objects(store, prefix) == expected ? expected : nil } ?? objects(store, prefix)
    }

    @Test func uploads_landUnderThePrefix_nowhereOnDisk_andAreServedWithTheirSizes() throws {
        let store = try SeaweedStore.shared
        let prefix = SeaweedStore.makePrefix()
        let app = try Self.start(store, prefix: prefix)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let url = try #require(try client.createdPost(email: "ash@example.com", .wideJPEG)["image_url"] as? String)
        let name = uploadName(url)
        #expect(try Self.objects(store, prefix) == [name])
        #expect(Self.localImages(app).isEmpty)

        let original = try client.get(url)
        #expect(original.status == 200 && original.header("Content-Type") == "image/jpeg")
        #expect(original.body == (try store.contents(of: "\(prefix)/\(name)")))
        #expect(original.header("ETag") == "\"\(name)\"")
        #expect(try client.get(url, headers: ["If-None-Match": "\"\(name)\""]).status == 304)

        let size = try client.get("\(url)?width=320")
        #expect(size.status == 200 && size.header("ETag") == "\"\(uploadBase(url))-w320.jpg\"")
        let report = try ImageProbe.inspect(bytes: size.body, at: [(0.5, 0.5)])
        #expect(report.width == 320 && report.height == 160)
        #expect(try Self.objects(store, prefix) == [uploadBase(url) + "-w320.jpg", name].sorted())
        #expect(try client.get("/uploads/\(String(repeating: "a", count: 32)).jpg").status == 404)
        #expect(try client.get("/uploads/\(String(repeating: "a", count: 32)).jpg?width=320").status == 404)
        #expect(Self.localImages(app).isEmpty)
        #expect(try MetricsProbe(port: app.server.port).value("storage_requests_total{op=\"put\",result=\"ok\"}") == 2)
    }

    @Test func replacedAndDeletedImages_andAvatars_leaveTheBucket() throws {
        let store = try SeaweedStore.shared
        let prefix = SeaweedStore.makePrefix()
        let app = try Self.start(store, prefix: prefix)
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try client.createdPost(email: "ash@example.com", .wideJPEG)
        let id = try #require(post["id"] as? Int)
        let first = try #require(post["image_url"] as? String)
        #expect(try client.get("\(first)?width=160").status == 200)
        let replaced = try ash.replaceImage(of: id, with: .smallJPEG)
        let second = try #require((replaced.json["post"] as? [String: Any])?["image_url"] as? String)
        // The old original and its size go; the new one stays.
        #expect(try Self.waitForObjects(store, prefix, [uploadName(second)]) == [uploadName(second)])
        #expect(try client.get(first).status == 404)
        #expect(try ash.send("DELETE", "/api/posts/\(id)").status == 200)
        #expect(try Self.waitForObjects(store, prefix, []).isEmpty)

        let avatar = try ash.putAvatar(try ImageFixture.smallJPEG.bytes)
        let firstAvatar = try #require((avatar.json["profile"] as? [String: Any])?["avatar_url"] as? String)
        let newer = try ash.putAvatar(try ImageFixture.widePNG.bytes)
        let secondAvatar = try #require((newer.json["profile"] as? [String: Any])?["avatar_url"] as? String)
        #expect(firstAvatar != secondAvatar)
        #expect(try Self.waitForObjects(store, prefix, [uploadName(secondAvatar)]) == [uploadName(secondAvatar)])
        #expect(try ash.send("DELETE", "/api/profiles/me/avatar").status == 200)
        #expect(try Self.waitForObjects(store, prefix, []).isEmpty)
    }

    /// An object put for a request whose transaction does not make the post (a retried
    /// create, answered from the first) is deleted: the bucket holds the first one only.
    @Test func anUploadThatMakesNoPost_leavesNoObject() throws {
        let store = try SeaweedStore.shared
        let prefix = SeaweedStore.makePrefix()
        let app = try Self.start(store, prefix: prefix)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        var form = MultipartBody()
        for (name, value) in [("title", "t"), ("summary", "s"), ("body", "b")] { form.field(name, value) }
        form.file("image", filename: "a.jpg", type: "image/jpeg", try ImageFixture.smallJPEG.bytes)
        let key = ["Idempotency-Key": "retry-\(UUID().uuidString)"]
        let created = try ash.send("POST", "/api/posts", body: form.finished, contentType: MultipartBody.contentType, headers: key)
        let retried = try ash.send("POST", "/api/posts", body: form.finished, contentType: MultipartBody.contentType, headers: key)
        #expect(created.status == 201 && retried.status == 201)
        let url = try #require((created.json["post"] as? [String: Any])?["image_url"] as? String)
        #expect(try Self.waitForObjects(store, prefix, [uploadName(url)]) == [uploadName(url)])
    }

    @Test func wrongCredentials_stopTheStart_loudly() throws {
        let store = try SeaweedStore.shared
        #expect {
            _ = try Self.start(store, prefix: SeaweedStore.makePrefix(), secret: "not-the-secret")
        } throws: { error in
            "\(error)".contains("STORAGE_URL") && "\(error)".contains("refused") && "\(error)".contains("SignatureDoesNotMatch")
        }
    }

    @Test func publicURL_redirectsOriginalsAndSizes() throws {
        let store = try SeaweedStore.shared
        let prefix = SeaweedStore.makePrefix()
        let app = try Self.start(store, prefix: prefix, publicURL: "https://cdn.example.com/media/")
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let url = try #require(try client.createdPost(email: "ash@example.com", .wideJPEG)["image_url"] as? String)
        let original = try client.get(url)
        #expect(original.status == 302)
        #expect(original.header("Location") == "https://cdn.example.com/media/\(prefix)/\(uploadName(url))")
        let size = try client.get("\(url)?width=640")
        #expect(size.status == 302)
        #expect(size.header("Location") == "https://cdn.example.com/media/\(prefix)/\(uploadBase(url))-w640.jpg")
        // The redirect's target exists: the size was made first.
        #expect(try Self.objects(store, prefix).contains("\(uploadBase(url))-w640.jpg"))
        #expect(try client.get("/uploads/\(String(repeating: "b", count: 32)).jpg?width=640").status == 404)
    }

    /// Two server processes with their own upload folders, one database, one bucket: each
    /// serves what the other stored, and a size one made is not made again by the other.
    @Test func twoInstances_serveEachOthersImages_andMakeASizeOnce() throws {
        let store = try SeaweedStore.shared
        let prefix = SeaweedStore.makePrefix()
        let conninfo = try TestDatabase.makeDatabase()
        func instance() throws -> (ServerProcess, APIClient, MetricsProbe) {
            var environment = store.environment(prefix: prefix)
            environment["DATABASE_URL"] = conninfo
            environment["PORT"] = "0"
            environment["AUTH_MODE"] = "trust"
            environment["UPLOAD_DIR"] = ScratchDirectory.path("uploads")
            let process = try ServerProcess(["serve", "--no-migrate"], environment: environment)
            let port = try #require(process.listeningPort())
            return (process, try APIClient(port: port), MetricsProbe(port: port))
        }
        let (first, one, oneMetrics) = try instance()
        let (second, two, twoMetrics) = try instance()
        defer {
            first.signal(SIGTERM)
            second.signal(SIGTERM)
            _ = first.waitForExit()
            _ = second.waitForExit()
        }
        let fromOne = try #require(try one.createdPost(email: "ash@example.com", .wideJPEG)["image_url"] as? String)
        let fromTwo = try #require(try two.createdPost(email: "blair@example.com", .widePNG)["image_url"] as? String)
        #expect(try two.get(fromOne).body == (try one.get(fromOne).body))
        #expect(try one.get(fromTwo).status == 200)
        let sizeOnOne = try one.get("\(fromOne)?width=320")
        #expect(sizeOnOne.status == 200)
        #expect(try oneMetrics.value("image_sizes_made_total") == 1)
        let sizeOnTwo = try two.get("\(fromOne)?width=320")
        #expect(sizeOnTwo.body == sizeOnOne.body)
        #expect(try twoMetrics.value("image_sizes_made_total") == 0, "the second instance found the size in the bucket")
        // A deletion through one instance empties the bucket for both.
        let id = try #require(try two.get("/api/posts/recent?limit=50").json["posts"] as? [[String: Any]])
            .first { $0["image_url"] as? String == fromOne }?["id"] as? Int
        #expect(try one.send("DELETE", "/api/posts/\(try #require(id))", headers: ["X-User-Email": "ash@example.com"]).status == 200)
        #expect(try Self.waitForObjects(store, prefix, [uploadName(fromTwo)]) == [uploadName(fromTwo)])
        #expect(try two.get(fromOne).status == 404)
    }
}
