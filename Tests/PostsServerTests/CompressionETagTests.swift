import Foundation
import PostsServer
import Testing
import TestSupport

/// gzip and weak ETags end to end (API.md "Images for phones", last bullet): JSON pages
/// compressed only when asked, images and event streams never; ETags that follow every
/// change a reader could see, and 304 for the one the client has.
@Suite struct CompressionETagTests {
    /// A recent page well over 1 KiB.
    private static func fill(_ client: APIClient) throws -> Int {
        var last = 0
        for index in 1...8 { last = try client.createPost("Post number \(index) with a longer title").id }
        return last
    }

    @Test func recentPage_isGzipWhenAsked_andPlainOtherwise() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        _ = try Self.fill(APIClient.user("ash@example.com", on: app))
        let client = try APIClient(port: app.server.port)
        let plain = try client.get("/api/posts/recent")
        #expect(plain.status == 200 && plain.body.count >= 1024)
        #expect(plain.header("Content-Encoding") == nil && plain.header("Vary") == "Accept-Encoding")
        let gzip = try client.get("/api/posts/recent", headers: ["Accept-Encoding": "br, gzip;q=0.8"])
        #expect(gzip.status == 200 && gzip.header("Content-Encoding") == "gzip" && gzip.header("Vary") == "Accept-Encoding")
        #expect(gzip.header("Content-Length") == "\(gzip.body.count)" && gzip.body.count < plain.body.count)
        #expect(gunzip(gzip.body) == plain.body)
        #expect(gzip.header("ETag") == plain.header("ETag"))
        let refused = try client.get("/api/posts/recent", headers: ["Accept-Encoding": "gzip;q=0, identity"])
        #expect(refused.header("Content-Encoding") == nil && refused.body == plain.body)
        // HEAD states the compressed length and sends nothing.
        let head = try client.send("HEAD", "/api/posts/recent", body: nil, contentType: nil, headers: ["Accept-Encoding": "gzip"])
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == "\(gzip.body.count)")
        // A small answer is plain even when gzip is allowed, but still varies.
        let small = try client.get("/api/profiles/1", headers: ["Accept-Encoding": "gzip"])
        #expect(small.header("Content-Encoding") == nil && small.header("Vary") == "Accept-Encoding")
    }

    @Test func imagesAndEvents_areNeverCompressed() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        var form = MultipartBody()
        for (name, value) in [("title", "t"), ("summary", "s"), ("body", "b")] { form.field(name, value) }
        let image = jpegBytes(size: 5000)
        form.file("image", filename: "a.jpg", type: "image/jpeg", image)
        let created = try ash.send("POST", "/api/posts", body: form.finished, contentType: MultipartBody.contentType)
        let url = try #require((created.json["post"] as? [String: Any])?["image_url"] as? String)
        let served = try ash.get(url, headers: ["Accept-Encoding": "gzip"])
        #expect(served.status == 200 && served.body.starts(with: [0xFF, 0xD8, 0xFF]) && served.header("Content-Encoding") == nil)
        let events = try EventStreamClient(port: app.server.port, headers: ["Accept-Encoding": "gzip"])
        #expect(events.head.status == 200 && events.head.header("Content-Encoding") == nil)
        #expect(try events.next().text == "retry: 2000\n\n")
    }

    @Test func etags_followLikesCommentsEditsAndRenames_and304WhenUnchanged() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try Self.fill(ash)
        let blair = try APIClient.user("blair@example.com", on: app)
        let reader = try APIClient(port: app.server.port)
        let paths = ["/api/posts/recent", "/api/posts/\(post)"]
        func tags() throws -> [String] {
            try paths.map { path in
                let answer = try reader.get(path)
                #expect(answer.status == 200)
                return try #require(answer.header("ETag"))
            }
        }
        var seen = try tags()
        #expect(seen.allSatisfy { $0.hasPrefix("W/\"") })
        for (index, path) in paths.enumerated() {
            for accept in ["gzip", "identity"] {
                let cached = try reader.get(path, headers: ["If-None-Match": "W/\"other\", " + seen[index], "Accept-Encoding": accept])
                #expect(cached.status == 304 && cached.body.isEmpty && cached.header("Content-Length") == nil)
                #expect(cached.header("ETag") == seen[index] && cached.header("Vary") == "Accept-Encoding")
            }
            #expect(try reader.get(path, headers: ["If-None-Match": "W/\"other\""]).status == 200)
        }
        let changes: [(String, () throws -> RawHTTPClient.Response)] = [
            ("like", { try blair.send("PUT", "/api/posts/\(post)/like") }),
            ("comment", { try blair.send("POST", "/api/posts/\(post)/comments", json: ["body": "nice"]) }),
            ("edit", { try ash.send("PATCH", "/api/posts/\(post)", json: ["title": "An edited title"]) }),
            ("rename", { try ash.send("PATCH", "/api/profiles/me", json: ["username": "ash.renamed"]) }),
        ]
        for (name, change) in changes {
            #expect((200..<300).contains(try change().status), "\(name)")
            let now = try tags()
            #expect(zip(now, seen).allSatisfy { $0 != $1 }, "\(name) left an ETag unchanged")
            #expect(try reader.get(paths[1], headers: ["If-None-Match": seen[1]]).status == 200, "\(name)")
            seen = now
        }
        // Profiles and the other list pages carry one too.
        for path in ["/api/profiles/1", "/api/posts", "/api/posts/\(post)/comments", "/api/posts/\(post)/likes",
                     "/api/posts/\(post)/children", "/api/posts/\(post)/ancestors"] {
            let answer = try reader.get(path)
            let tag = try #require(answer.header("ETag"), "\(path)")
            #expect(try reader.get(path, headers: ["If-None-Match": tag]).status == 304, "\(path)")
        }
    }
}
