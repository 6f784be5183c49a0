import Foundation
import PostsServer
import Testing
import TestSupport

/// What the image tests share: uploads of the fixtures as the apps send them, the upload
/// folder's contents, and the process's memory.
extension APIClient {
    /// The firefly form (`POST /api/posts/create`): its text fields, the user named by
    /// `email` (trust mode), and the fixture as `image`.
    func createPost(email: String, image: [UInt8], filename: String = "image.jpg",
                    type: String = "image/jpeg") throws -> RawHTTPClient.Response {
        var form = MultipartBody()
        for (name, value) in [("email", email), ("title", "With an image"), ("summary", "A summary"),
                              ("body", "A body"), ("timezone", "Europe/Paris"), ("parent_id", "")] {
            form.field(name, value)
        }
        form.file("image", filename: filename, type: type, image)
        return try send("POST", "/api/posts/create", body: form.finished, contentType: MultipartBody.contentType)
    }

    func createPost(email: String, _ fixture: ImageFixture) throws -> RawHTTPClient.Response {
        try createPost(email: email, image: try fixture.bytes, filename: fixture.rawValue)
    }

    /// Uploads and returns the post's JSON, requiring a 201.
    func createdPost(email: String, _ fixture: ImageFixture) throws -> [String: Any] {
        let response = try createPost(email: email, fixture)
        try #require(response.status == 201, "\(fixture): \(response.status) \(response.text)")
        return try #require(response.json["post"] as? [String: Any])
    }

    /// `PATCH /api/posts/<id>` with a new image.
    func replaceImage(of post: Int, with fixture: ImageFixture) throws -> RawHTTPClient.Response {
        var form = MultipartBody()
        form.file("image", filename: fixture.rawValue, type: "application/octet-stream", try fixture.bytes)
        return try send("PATCH", "/api/posts/\(post)", body: form.finished, contentType: MultipartBody.contentType)
    }

    /// `PUT /api/profiles/me/avatar` with `bytes` as the `image` part.
    func putAvatar(_ bytes: [UInt8], part: String = "image") throws -> RawHTTPClient.Response {
        var form = MultipartBody()
        form.file(part, filename: "avatar", type: "application/octet-stream", bytes)
        return try send("PUT", "/api/profiles/me/avatar", body: form.finished, contentType: MultipartBody.contentType)
    }
}

enum UploadFolder {
    /// The names in `UPLOAD_DIR`, sorted.
    static func files(_ app: Application) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: app.configuration.uploadDirectory)) ?? []).sorted()
    }

    /// Waits until the folder holds exactly `expected` (the multipart consumer's temporary
    /// file goes when the request is done with, which may be just after its answer left).
    /// The bound is generous: it costs only a failing test.
    static func waitUntil(_ app: Application, holds expected: [String], timeout: Duration = .seconds(30)) -> [String] {
        let expected = expected.sorted()
        return eventuallyValue(timeout: timeout) { files(app) == expected ? expected : nil } ?? files(app)
    }

    static func contains(_ app: Application, _ name: String) -> Bool {
        FileManager.default.fileExists(atPath: app.configuration.uploadDirectory + "/" + name)
    }
}

/// `/uploads/<name>` → `<name>`.
func uploadName(_ url: String) -> String { String(url.dropFirst("/uploads/".count)) }

/// `<hex>.<ext>` → `<hex>`.
func uploadBase(_ url: String) -> String { String(uploadName(url).prefix { $0 != "." }) }

/// A line of /proc/self/status in bytes (`VmRSS`, `VmHWM`); nil off Linux.
func processMemory(_ field: String) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first
        return kilobytes.map { $0 * 1024 }
    }
    return nil
}
