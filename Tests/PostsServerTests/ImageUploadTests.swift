import Foundation
import PostsServer
import Testing
import TestSupport

/// Post images end to end (API.md "Images for phones"): every upload is made again before
/// it is kept (upright, without metadata, HEIC as JPEG), its size is in the post, and what
/// cannot or must not be decoded is refused with the documented status.
@Suite struct ImageUploadTests {
    /// Each accepted kind: its stored extension and its size as it displays.
    private static let accepted: [(ImageFixture, ext: String, type: String, width: Int, height: Int)] = [
        (.gpsRotated, "jpg", "image/jpeg", 400, 600),
        (.textPNG, "png", "image/png", 300, 200),
        (.animatedGIF, "gif", "image/gif", 120, 80),
        (.animatedWebP, "webp", "image/webp", 120, 80),
        (.heic, "jpg", "image/jpeg", 640, 480),
        (.stillWebP, "webp", "image/webp", 400, 300),
        (.progressiveJPEG, "jpg", "image/jpeg", 400, 300),
    ]

    @Test func eachAcceptedFormat_is201_withItsSizeInTheAnswerAndOnRead() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        for (fixture, ext, type, width, height) in Self.accepted {
            let post = try client.createdPost(email: "ash@example.com", fixture)
            let url = try #require(post["image_url"] as? String)
            #expect(url.firstMatch(of: /^\/uploads\/[0-9a-f]{32}\./) != nil && url.hasSuffix("." + ext), "\(fixture): \(url)")
            #expect(post.int("image_width") == width && post.int("image_height") == height, "\(fixture)")
            let read = try #require(try client.post(post.id))
            #expect(read.int("image_width") == width && read.int("image_height") == height, "\(fixture)")
            let served = try client.get(url)
            #expect(served.status == 200 && served.header("Content-Type") == type, "\(fixture)")
            let report = try ImageProbe.inspect(bytes: served.body)
            #expect(report.width == width && report.height == height, "\(fixture): \(report)")
        }
        let counted = try MetricsProbe(port: app.server.port).value("images_processed_total")
        #expect(counted == Double(Self.accepted.count))
    }

    @Test func aPostWithoutImage_hasNullSizes() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost()
        #expect(post["image_url"] is NSNull && post["image_width"] is NSNull && post["image_height"] is NSNull)
        let read = try #require(try ash.post(post.id))
        #expect(read["image_width"] is NSNull && read["image_height"] is NSNull)
    }

    /// What is served at image_url is the image made again: no EXIF, GPS, serial or
    /// comment anywhere in its bytes, turned upright (red on top), and no PNG text.
    @Test func theServedImage_carriesNoMetadata_andIsUpright() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let photo = try client.createdPost(email: "ash@example.com", .gpsRotated)
        let served = try client.get(try #require(photo["image_url"] as? String)).body
        #expect(ImageProbe.privateTags(try ImageProbe.exiftool(bytes: served)).isEmpty)
        for secret in ["SERIAL-0042", "PhoneMaker", "camera comment"] {
            #expect(Data(served).range(of: Data(secret.utf8)) == nil, "\(secret)")
        }
        let report = try ImageProbe.inspect(bytes: served, at: [(0.5, 0.1), (0.5, 0.9)])
        #expect(report.exifTags == 0 && report.colours.first?.first ?? 0 > 180 && report.colours.last?.last ?? 0 > 180,
                "\(report)")

        let png = try client.createdPost(email: "ash@example.com", .textPNG)
        let pngBytes = try client.get(try #require(png["image_url"] as? String)).body
        #expect(try ImageProbe.inspect(bytes: pngBytes).textKeys.isEmpty)
        for secret in ["secret comment", "Jane Doe", "GPS 48.85"] {
            #expect(Data(pngBytes).range(of: Data(secret.utf8)) == nil, "\(secret)")
        }
    }

    /// A header claiming 50000×50000 is refused by its header: at once, and without the
    /// gigabytes a decode would take. Memory is the whole test process's, so the bound is
    /// generous for other tests running meanwhile and far below what a decode would need.
    @Test func aDecompressionBomb_is422_atOnce_withoutMemoryGrowth() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let bomb = try ImageFixture.bomb.bytes
        // A first upload warms what a first request allocates once (threads, libvips).
        let warmUp = try #require(try client.createdPost(email: "ash@example.com", .smallJPEG)["image_url"] as? String)
        let rssBefore = processMemory("VmRSS"), peakBefore = processMemory("VmHWM")
        let started = ContinuousClock.now
        let refused = try client.createPost(email: "ash@example.com", image: bomb, filename: "bomb.png", type: "image/png")
        let elapsed = ContinuousClock.now - started
        #expect(refused.status == 422 && refused.json["error"] as? String == "validation_failed", "\(refused.text)")
        #expect(elapsed < .seconds(1), "\(elapsed)")
        if let rssBefore, let rssAfter = processMemory("VmRSS") {
            #expect(rssAfter - rssBefore < 64 << 20, "VmRSS grew by \((rssAfter - rssBefore) >> 20) MiB")
        }
        if let peakBefore, let peakAfter = processMemory("VmHWM") {
            #expect(peakAfter - peakBefore < 512 << 20, "VmHWM grew by \((peakAfter - peakBefore) >> 20) MiB")
        }
        let tooWide = try client.createPost(email: "ash@example.com", .tooWide)
        #expect(tooWide.status == 422 && tooWide.json["error"] as? String == "validation_failed", "\(tooWide.text)")
        #expect(try MetricsProbe(port: app.server.port).value("images_too_large_total") == 2)
        // Only the warm-up's image was kept.
        #expect(UploadFolder.waitUntil(app, holds: [uploadName(warmUp)]) == [uploadName(warmUp)])
    }

    /// What cannot be uploaded whole: cut short (a flaky phone connection), garbled.
    static let damaged: [ImageFixture] = [.truncated, .truncatedProgressive, .garbled, .corrupt, .truncatedPNG, .truncatedWebP,
                                          .truncatedGIF]

    /// Bytes that start like an image but do not decode to the end are 415 (the client
    /// retries; a grey-filled picture is never published), counted, and leave neither a
    /// post nor a file.
    @Test func damagedImages_are415_andLeaveNothing() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        for fixture in Self.damaged {
            let response = try client.createPost(email: "ash@example.com", fixture)
            #expect(response.status == 415 && response.json["error"] as? String == "unsupported_media_type",
                    "\(fixture): \(response.text)")
        }
        // Not an image by its first bytes: refused before it is decoded at all.
        let svg = try client.createPost(email: "ash@example.com", image: Array("<svg xmlns='http://www.w3.org/2000/svg'/>".utf8))
        #expect(svg.status == 415)
        #expect(try MetricsProbe(port: app.server.port).value("images_unreadable_total") == Double(Self.damaged.count))
        #expect(UploadFolder.waitUntil(app, holds: []).isEmpty)
        let posts: Int = try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM posts").first!.decode("n") }
        #expect(posts == 0)
    }

    @Test func images_areNeverGzipped() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let post = try client.createdPost(email: "ash@example.com", .widePNG)
        let url = try #require(post["image_url"] as? String)
        for path in [url, url + "?width=320"] {
            let plain = try client.get(path)
            let asked = try client.get(path, headers: ["Accept-Encoding": "gzip"])
            #expect(plain.status == 200 && asked.status == 200, "\(path)")
            #expect(asked.header("Content-Encoding") == nil && asked.body == plain.body, "\(path)")
            #expect(asked.header("Content-Length") == "\(plain.body.count)", "\(path)")
        }
    }

    /// PATCH with a new image gives the post the new size, and the old file goes.
    @Test func replacingTheImage_updatesTheSize_andRemovesTheOldFile() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createdPost(email: "ash@example.com", .wideJPEG)
        let old = try #require(post["image_url"] as? String)
        #expect(try ash.get(old + "?width=160").status == 200)
        let patched = try ash.replaceImage(of: post.id, with: .stillWebP)
        #expect(patched.status == 200, "\(patched.text)")
        let updated = try #require(patched.json["post"] as? [String: Any])
        let new = try #require(updated["image_url"] as? String)
        #expect(new != old && new.hasSuffix(".webp"))
        #expect(updated.int("image_width") == 400 && updated.int("image_height") == 300)
        // A text-only edit keeps the image and its size.
        let edited = try ash.send("PATCH", "/api/posts/\(post.id)", json: ["title": "Edited"])
        let kept = try #require(edited.json["post"] as? [String: Any])
        #expect(kept["image_url"] as? String == new && kept.int("image_width") == 400)
        #expect(UploadFolder.waitUntil(app, holds: [uploadName(new)]) == [uploadName(new)])
        #expect(try ash.get(old).status == 404 && ash.get(old + "?width=160").status == 404)
    }

    /// Posts stored before migration 0009 (their file kept byte for byte, as the server
    /// used to) get their size after a start, read from the file's header and turned as its
    /// EXIF says; a post whose file is gone keeps nulls.
    @Test func imagesStoredBeforeSizes_areMeasuredAfterStart() throws {
        let folder = ScratchDirectory.path("uploads")
        let first = try TestApplication.start { $0.uploadDirectory = folder }
        let conninfo = try #require(first.configuration.databaseURL)
        let ash = try APIClient.user("ash@example.com", on: first)
        // The one without a file first: when the other is measured, this one was passed.
        let gone = Int64(try ash.createPost("File gone").id), kept = Int64(try ash.createPost("File kept").id)
        let name = String(repeating: "c0", count: 16) + ".jpg"
        try Data(try ImageFixture.gpsRotated.bytes).write(to: URL(fileURLWithPath: folder + "/" + name))
        try first.pool.withConnection { connection in
            try connection.query("UPDATE posts SET image_url = \("/uploads/" + name) WHERE id = \(kept)")
            try connection.query("UPDATE posts SET image_url = \("/uploads/" + String(repeating: "d1", count: 16) + ".png") WHERE id = \(gone)")
        }
        first.stop()

        let second = try TestApplication.start(conninfo: conninfo) { $0.uploadDirectory = folder }
        defer { second.stop() }
        let client = try APIClient(port: second.server.port)
        let measured = eventuallyValue(timeout: .seconds(30)) { () -> [String: Any]? in
            guard let post = try? client.post(Int(kept)), post.int("image_width") != nil else { return nil }
            return post
        }
        #expect(measured?.int("image_width") == 400 && measured?.int("image_height") == 600, "\(String(describing: measured))")
        let missing = try #require(try client.post(Int(gone)))
        #expect(missing["image_width"] is NSNull && missing["image_height"] is NSNull)
    }
}
