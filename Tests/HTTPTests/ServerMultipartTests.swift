import Foundation
import HTTP
import Synchronization
import Testing
import TestSupport

/// Multipart uploads over real sockets: file parts streamed to the upload folder, refused on
/// their first bytes, and never left behind.
@Suite struct ServerMultipartTests {
    private static let boundary = "----posts-server-test-boundary"
    private static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    private final class Folder: Sendable {
        let path = ScratchDirectory.path("uploads")
        init() { try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        var entries: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
    }

    /// `/upload` keeps the file as `kept.png`; `/peek` looks at the form and keeps nothing.
    private static func start(_ folder: Folder) throws -> Server {
        var policy = MultipartBodyConsumer.Policy(directory: folder.path, bodyLimit: 11 << 20, maxFileBytes: 10 << 20) { part, firstBytes throws(HTTPError) in
            guard Array(firstBytes.prefix(8)) == png else {
                throw HTTPError(.unsupportedMediaType, message: "\(part.name) is not a PNG")
            }
        }
        policy.inspectedPrefix = 8
        return try TestHTTPServer.start(routes: { router in
            router.post("/upload", body: .multipart(policy)) { request, _ in
                let form = try #require(request.form)
                let image = try #require(form.file(named: "image"))
                try image.keep(at: folder.path + "/kept.png")
                return Response(body: Array("\(form[field: "title"] ?? "-") \(image.size) \(image.filename ?? "-")".utf8))
            }
            router.post("/peek", body: .multipart(policy)) { request, _ in
                Response(body: Array("\(request.form?.files.count ?? -1) files".utf8))
            }
        })
    }

    private static func form(title: String, file: [UInt8]?) -> [UInt8] {
        var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n\(title)\r\n".utf8)
        if let file {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"image\"; filename=\"image.png\"\r\nContent-Type: image/png\r\n\r\n".utf8)
            body += file + Array("\r\n".utf8)
        }
        return body + Array("--\(boundary)--\r\n".utf8)
    }

    private static func head(path: String, length: Int) -> [UInt8] {
        Array("POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=\(boundary)\r\nContent-Length: \(length)\r\n\r\n".utf8)
    }

    private static func send(_ path: String, _ body: [UInt8], to client: RawHTTPClient) throws {
        try client.send(head(path: path, length: body.count) + body)
    }

    @Test func fileParts_streamToTheUploadFolder_andAreKeptByRename() throws {
        let folder = Folder()
        let server = try Self.start(folder)
        defer { server.stop() }
        var generator = SplitMix64(state: 11)
        let image = Self.png + (0..<(3 * 1024 * 1024)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let client = try RawHTTPClient(port: server.port)
        try Self.send("/upload", Self.form(title: "Sunset", file: image), to: client)
        let response = try client.readResponse()
        #expect(response.text == "Sunset \(image.count) image.png")
        #expect(folder.entries == ["kept.png"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path + "/kept.png")) == Data(image))
        #expect(server.bodyMemoryInUse == 0)
    }

    @Test func filesNobodyKept_areDeletedAfterTheRequest() throws {
        let folder = Folder()
        let server = try Self.start(folder)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try Self.send("/peek", Self.form(title: "x", file: Self.png + [1, 2, 3]), to: client)
        #expect(try client.readResponse().text == "1 files")
        #expect(folder.entries == [])
    }

    /// The file's first bytes are not a PNG: 415 comes before the rest of the body is sent,
    /// and no temporary file is left.
    @Test func wrongKindOfFile_isRefusedOnItsFirstBytes() throws {
        let folder = Folder()
        let server = try Self.start(folder)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let start = Array("--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\n".utf8)
        try client.send(Self.head(path: "/upload", length: 10 * 1024 * 1024) + start + Array("GIF89a and more bytes".utf8))
        let response = try client.readResponse()
        #expect(response.status == 415)
        #expect(response.json["message"] as? String == "image is not a PNG")
        #expect(client.waitForClose())
        #expect(folder.entries == [])
    }

    @Test func fileOverItsLimit_is413AndLeavesNothing() throws {
        let folder = Folder()
        let server = try Self.start(folder)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let image = Self.png + [UInt8](repeating: 7, count: 10 * 1024 * 1024)
        try Self.send("/upload", Self.form(title: "big", file: image), to: client)
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(client.waitForClose())
        #expect(eventually { folder.entries.isEmpty })
    }

    @Test func otherContentTypes_are415AndAMissingBoundaryIs400() throws {
        let folder = Folder()
        let server = try Self.start(folder)
        defer { server.stop() }
        let json = try RawHTTPClient(port: server.port)
        #expect(try json.exchange("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}").status == 415)
        let noBoundary = try RawHTTPClient(port: server.port)
        #expect(try noBoundary.exchange("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data\r\nContent-Length: 2\r\n\r\nab").status == 400)
    }

    @Test func formWithoutItsFinalBoundary_is400() throws {
        let folder = Folder()
        let server = try Self.start(folder)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        var body = Self.form(title: "cut", file: Self.png)
        body.removeLast("--\(Self.boundary)--\r\n".utf8.count)
        try Self.send("/upload", body, to: client)
        #expect(try client.readResponse().status == 400)
        #expect(folder.entries == [])
    }
}
