import Foundation
import PostsServer
import Testing
import TestSupport

/// `GET /uploads/<name>?width=N` (API.md "Images for phones"): the five widths, aspect kept,
/// never scaled up, made once on first request (even by many at once) and kept beside the
/// original until the post lets go of it.
@Suite struct ImageSizeTests {
    private static let widths = [160, 320, 640, 1080, 1600]

    private static func sizesMade(_ app: Application) throws -> Double {
        try MetricsProbe(port: app.server.port).value("image_sizes_made_total") ?? -1
    }

    @Test func eachWidth_keepsTheAspectAndFormat_withItsOwnETag() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let url = try #require(try client.createdPost(email: "ash@example.com", .wideJPEG)["image_url"] as? String)
        var tags: Set<String> = []
        for width in Self.widths {
            let size = try client.get("\(url)?width=\(width)")
            #expect(size.status == 200 && size.header("Content-Type") == "image/jpeg", "\(width)")
            #expect(size.header("Cache-Control") == "public, max-age=31536000, immutable")
            let etag = try #require(size.header("ETag"))
            #expect(etag == "\"\(uploadBase(url))-w\(width).jpg\"")
            tags.insert(etag)
            let report = try ImageProbe.inspect(bytes: size.body, at: [(0.25, 0.5), (0.75, 0.5)])
            #expect(report.format == "JPEG" && report.width == width && report.height == width / 2, "\(width): \(report)")
            #expect(report.colours.first?.first ?? 0 > 180 && report.colours.last?.last ?? 0 > 180, "\(width): \(report.colours)")
            let cached = try client.get("\(url)?width=\(width)", headers: ["If-None-Match": etag])
            #expect(cached.status == 304 && cached.body.isEmpty && cached.header("ETag") == etag, "\(width)")
        }
        let original = try client.get(url)
        tags.insert(try #require(original.header("ETag")))
        #expect(tags.count == Self.widths.count + 1)
        // Another width's tag is not this one's.
        #expect(try client.get("\(url)?width=160", headers: ["If-None-Match": "\"\(uploadBase(url))-w320.jpg\""]).status == 200)
        // Made once each; reading them again is a file read.
        #expect(try Self.sizesMade(app) == Double(Self.widths.count))
        for width in Self.widths { #expect(try client.get("\(url)?width=\(width)").status == 200) }
        #expect(try Self.sizesMade(app) == Double(Self.widths.count))
    }

    @Test func otherWidths_are400() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let url = try #require(try client.createdPost(email: "ash@example.com", .smallJPEG)["image_url"] as? String)
        for width in ["100", "0", "-320", "320.0", "abc", "", "99999999999999999999"] {
            let response = try client.get("\(url)?width=\(width)")
            #expect(response.status == 400 && response.json["error"] as? String == "bad_request", "\(width): \(response.status)")
        }
        // A size of no stored image is 404, and makes nothing.
        #expect(try client.get("/uploads/\(String(repeating: "ab", count: 16)).jpg?width=320").status == 404)
        #expect(try Self.sizesMade(app) == 0)
    }

    @Test func aSmallImage_isNeverScaledUp() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let url = try #require(try client.createdPost(email: "ash@example.com", .smallJPEG)["image_url"] as? String)
        for width in [640, 1600] {
            let size = try client.get("\(url)?width=\(width)")
            let report = try ImageProbe.inspect(bytes: size.body)
            #expect(size.status == 200 && report.width == 300 && report.height == 200, "\(width): \(report)")
        }
        let shrunk = try ImageProbe.inspect(bytes: try client.get("\(url)?width=160").body)
        #expect(shrunk.width == 160 && (106...107).contains(shrunk.height), "\(shrunk)")
    }

    @Test func aGIFsSize_isItsFirstFrameAsPNG() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let url = try #require(try client.createdPost(email: "ash@example.com", .animatedGIF)["image_url"] as? String)
        let size = try client.get("\(url)?width=160")
        #expect(size.status == 200 && size.header("Content-Type") == "image/png")
        #expect(size.header("ETag") == "\"\(uploadBase(url))-w160.png\"")
        let report = try ImageProbe.inspect(bytes: size.body, at: [(0.5, 0.5)])
        #expect(report.format == "PNG" && report.frames == 1 && report.width == 120 && report.height == 80, "\(report)")
        // The first frame is the red one.
        #expect(report.colours.first?.first ?? 0 > 180, "\(report.colours)")
        // The original stays an animation.
        #expect(try ImageProbe.inspect(bytes: client.get(url).body).frames == 3)
    }

    /// Eight first requests for the same size, all sent before any is answered: one makes
    /// it, the others wait for it; all get the same bytes.
    @Test func concurrentFirstRequests_makeTheSizeOnce() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let url = try #require(try APIClient(port: app.server.port).createdPost(email: "ash@example.com", .wideJPEG)["image_url"] as? String)
        let before = try Self.sizesMade(app)
        let clients = try (0..<8).map { _ in try RawHTTPClient(port: app.server.port, timeout: .seconds(20)) }
        for client in clients { try client.send("GET \(url)?width=640 HTTP/1.1\r\nHost: localhost\r\n\r\n") }
        let answers = try clients.map { try $0.readResponse() }
        #expect(answers.allSatisfy { $0.status == 200 }, "\(answers.map(\.status))")
        #expect(Set(answers.map(\.body)).count == 1 && answers[0].body.count > 0)
        #expect(try Self.sizesMade(app) == before + 1)
        #expect(UploadFolder.files(app).filter { $0.contains("-w640.") } == ["\(uploadBase(url))-w640.jpg"])
    }

    @Test func deletingThePost_removesTheOriginalAndItsSizes() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createdPost(email: "ash@example.com", .widePNG)
        let url = try #require(post["image_url"] as? String)
        for width in [160, 640, 1600] { #expect(try ash.get("\(url)?width=\(width)").status == 200) }
        let base = uploadBase(url)
        #expect(UploadFolder.waitUntil(app, holds: [uploadName(url), "\(base)-w160.png", "\(base)-w640.png", "\(base)-w1600.png"]).count == 4)
        #expect(try ash.send("DELETE", "/api/posts/\(post.id)").status == 200)
        #expect(UploadFolder.waitUntil(app, holds: []) == [])
        #expect(try ash.get(url).status == 404 && ash.get("\(url)?width=160").status == 404)
    }

    @Test func replacingTheImage_removesTheOldOriginalAndSizes() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createdPost(email: "ash@example.com", .wideJPEG)
        let old = try #require(post["image_url"] as? String)
        for width in [160, 320] { #expect(try ash.get("\(old)?width=\(width)").status == 200) }
        let patched = try ash.replaceImage(of: post.id, with: .animatedGIF)
        let new = try #require((patched.json["post"] as? [String: Any])?["image_url"] as? String)
        #expect(UploadFolder.waitUntil(app, holds: [uploadName(new)]) == [uploadName(new)])
        #expect(try ash.get("\(old)?width=160").status == 404)
    }

    /// A link planted in the folder under a name the server could have made is never
    /// served (UploadTests.aSymbolicLink_isNotServed): neither may a size made from it be.
    /// The original is opened with O_NOFOLLOW, but `openSize` checks it with
    /// `FileManager.fileExists` and libvips opens it by path, both following the link.
    @Test func aSymbolicLink_isNotServedAsASizeEither() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let outside = NSTemporaryDirectory() + "posts-server-outside-\(UUID().uuidString).jpg"
        try Data(try ImageFixture.smallJPEG.bytes).write(to: URL(fileURLWithPath: outside))
        defer { try? FileManager.default.removeItem(atPath: outside) }
        let name = String(repeating: "ef", count: 16) + ".jpg"
        try FileManager.default.createSymbolicLink(atPath: app.configuration.uploadDirectory + "/" + name,
                                                   withDestinationPath: outside)
        let client = try APIClient(port: app.server.port)
        #expect(try client.get("/uploads/" + name).status == 404)
        let size = try client.get("/uploads/\(name)?width=160")
        #expect(size.status == 404)
    }
}

