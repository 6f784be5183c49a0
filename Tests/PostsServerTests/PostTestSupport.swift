import Foundation
import PostsServer
import Testing
import TestSupport

/// Helpers the posts tests share: a trust-mode client per user and short ways to make posts.
extension APIClient {
    static func user(_ email: String, on app: Application) throws -> APIClient {
        let client = try APIClient(port: app.server.port)
        client.headers["X-User-Email"] = email
        return client
    }

    /// Creates a post and returns its JSON object.
    @discardableResult
    func createPost(_ title: String = "A title", parent: Int? = nil, extra: [String: Any?] = [:]) throws -> [String: Any] {
        var fields: [String: Any?] = ["title": title, "summary": "A summary", "body": "A body"]
        if let parent { fields["parent_id"] = parent }
        fields.merge(extra) { $1 }
        let response = try send("POST", "/api/posts", json: fields)
        #expect(response.status == 201, "\(response.text)")
        return try #require(response.json["post"] as? [String: Any])
    }

    func post(_ id: Int) throws -> [String: Any]? {
        try get("/api/posts/\(id)").json["post"] as? [String: Any]
    }
}

extension Dictionary where Key == String, Value == Any {
    var id: Int { self["id"] as! Int }
    func int(_ key: String) -> Int? { self[key] as? Int }
}

/// A small valid JPEG's first bytes followed by filler: enough for the magic-byte check.
func jpegBytes(size: Int, seed: UInt64 = 1) -> [UInt8] {
    var state = seed
    let filler = (0..<max(0, size - 4)).map { _ -> UInt8 in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return UInt8(truncatingIfNeeded: state >> 33)
    }
    return [0xFF, 0xD8, 0xFF, 0xE0] + filler
}

/// A multipart/form-data body with text fields and optional files.
struct MultipartBody {
    static let boundary = "----firefly-test-boundary-7MA4YWxk"
    var bytes: [UInt8] = []

    mutating func field(_ name: String, _ value: String) {
        bytes += Array("--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
    }

    mutating func file(_ name: String, filename: String, type: String, _ contents: [UInt8]) {
        bytes += Array("--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"; filename=\"\(filename)\"\r\nContent-Type: \(type)\r\n\r\n".utf8)
        bytes += contents + Array("\r\n".utf8)
    }

    var finished: [UInt8] { bytes + Array("--\(Self.boundary)--\r\n".utf8) }
    static let contentType = "multipart/form-data; boundary=\(boundary)"
}
