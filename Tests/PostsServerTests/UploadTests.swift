import Foundation
import PostsServer
import Testing
import TestSupport

/// Images: stored by the server under its own names, served with sendfile and caching
/// headers; nothing else in the folder is ever reachable.
@Suite struct UploadTests {
    private static func upload(_ client: APIClient, _ image: [UInt8], filename: String = "a.png",
                               path: String = "/api/posts") throws -> RawHTTPClient.Response {
        var form = MultipartBody()
        for (name, value) in [("title", "t"), ("summary", "s"), ("body", "b")] { form.field(name, value) }
        form.file("image", filename: filename, type: "image/png", image)
        return try client.send("POST", path, body: form.finished, contentType: MultipartBody.contentType)
    }

    private static func files(_ app: Application) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: app.configuration.uploadDirectory)) ?? []).sorted()
    }

    @Test func storedImage_isServedWithItsTypeETagAndCaching() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let created = try Self.upload(ash, tinyPNG)
        #expect(created.status == 201)
        let url = try #require((created.json["post"] as? [String: Any])?["image_url"] as? String)
        #expect(url.hasSuffix(".png"))
        let anonymous = try APIClient(port: app.server.port)
        let served = try anonymous.get(url)
        // The server's own PNG of the image (made again, without metadata), not the bytes sent.
        #expect(served.status == 200 && served.body.starts(with: tinyPNG.prefix(8)))
        #expect(served.header("Content-Type") == "image/png")
        #expect(served.header("Cache-Control") == "public, max-age=31536000, immutable")
        #expect(served.header("X-Content-Type-Options") == "nosniff")
        let etag = try #require(served.header("ETag"))
        let cached = try anonymous.get(url, headers: ["If-None-Match": etag])
        #expect(cached.status == 304 && cached.body.isEmpty && cached.header("ETag") == etag)
        #expect(try anonymous.get(url, headers: ["If-None-Match": "\"other\""]).status == 200)
        let head = try anonymous.send("HEAD", url, body: nil, contentType: nil)
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == "\(served.body.count)")
        #expect(Self.files(app) == [String(url.dropFirst("/uploads/".count))])
    }

    @Test func onlyNamesTheServerMade_areServed() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let folder = app.configuration.uploadDirectory
        try Data("secret".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        try Data("temp".utf8).write(to: URL(fileURLWithPath: folder + "/.upload-0123456789abcdef.part"))
        let client = try APIClient(port: app.server.port)
        for path in ["/uploads/notes.txt", "/uploads/.upload-0123456789abcdef.part", "/uploads/..%2F..%2Fetc%2Fpasswd",
                     "/uploads/%2e%2e", "/uploads/..", "/uploads/%2Fetc%2Fpasswd", "/uploads/" + String(repeating: "a", count: 32) + ".jpg",
                     "/uploads/" + String(repeating: "A", count: 32) + ".jpg", "/uploads/x/y", "/uploads/"] {
            #expect(try client.get(path).status == 404, "\(path)")
        }
    }

    /// Temporary files a crashed process left are removed at start; a recent one may be a
    /// live upload of another instance sharing the folder, and stays.
    @Test func abandonedTemporaryFiles_areRemovedAtStart() throws {
        let folder = ScratchDirectory.path("uploads")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let old = folder + "/.upload-00000000000000aa.part", recent = folder + "/.upload-00000000000000bb.part"
        for path in [old, recent] { try Data("partial".utf8).write(to: URL(fileURLWithPath: path)) }
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: old)
        let app = try TestApplication.start { $0.uploadDirectory = folder }
        defer { app.stop() }
        #expect(!FileManager.default.fileExists(atPath: old))
        #expect(FileManager.default.fileExists(atPath: recent))
    }

    /// A link with a name the server could have made, planted in the folder, is not followed.
    @Test func aSymbolicLink_isNotServed() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let outside = NSTemporaryDirectory() + "posts-server-outside-\(UUID().uuidString).png"
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3, 4]).write(to: URL(fileURLWithPath: outside))
        defer { try? FileManager.default.removeItem(atPath: outside) }
        let name = String(repeating: "ab", count: 16) + ".png"
        try FileManager.default.createSymbolicLink(atPath: app.configuration.uploadDirectory + "/" + name,
                                                   withDestinationPath: outside)
        #expect(try APIClient(port: app.server.port).get("/uploads/" + name).status == 404)
    }

    /// In token mode a form without a token of the right shape is refused from its head:
    /// not one byte of it is read or written to the folder.
    @Test func aFormWithoutAToken_isRefusedBeforeItsBodyIsRead() throws {
        let app = try TestApplication.start { $0.authMode = .token }
        defer { app.stop() }
        for authorization in ["", "Authorization: Bearer x\r\n", "Authorization: Basic YTpi\r\n"] {
            let client = try RawHTTPClient(port: app.server.port)
            try client.send("""
                POST /api/posts HTTP/1.1\r\nHost: localhost\r\nContent-Type: \(MultipartBody.contentType)\r\n\
                \(authorization)Content-Length: 10000000\r\n\r\n
                """)
            let response = try client.readResponse()
            #expect(response.status == 401, "\(authorization)")
            #expect(response.json["error"] as? String == "unauthorized")
            #expect(Self.files(app).isEmpty)
        }
    }

    @Test func notAnImage_is415_andLeavesNoFile() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let response = try Self.upload(ash, Array("<svg xmlns='http://www.w3.org/2000/svg'/>".utf8), filename: "a.jpg")
        #expect(response.status == 415)
        #expect(response.json["error"] as? String == "unsupported_media_type")
        #expect(Self.files(app).isEmpty)
        let posts: Int = try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM posts").first!.decode("n") }
        #expect(posts == 0)
    }

    @Test func imageOver10MiB_is413() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let response = try Self.upload(ash, jpegBytes(size: 10 * 1024 * 1024 + 1))
        #expect(response.status == 413)
        #expect(Self.files(app).isEmpty)
    }

    @Test func replacedAndDeletedImages_areRemoved() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try #require(Self.upload(ash, jpegBytes(size: 1000)).json["post"] as? [String: Any])
        let first = try #require(post["image_url"] as? String)
        var form = MultipartBody()
        form.file("image", filename: "b.jpg", type: "image/jpeg", jpegBytes(size: 2000, seed: 2))
        let patched = try ash.send("PATCH", "/api/posts/\(post.id)", body: form.finished, contentType: MultipartBody.contentType)
        let second = try #require((patched.json["post"] as? [String: Any])?["image_url"] as? String)
        #expect(second != first)
        // Deleted after the commit, by the storage deletion worker (API.md: a durable queue).
        #expect(UploadFolder.waitUntil(app, holds: [uploadName(second)]) == [uploadName(second)])
        #expect(try ash.get(first).status == 404)
        #expect(try ash.send("DELETE", "/api/posts/\(post.id)").status == 200)
        #expect(UploadFolder.waitUntil(app, holds: []).isEmpty)
    }
}
