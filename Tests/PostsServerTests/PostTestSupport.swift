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

    /// The user this client acts for (made by this first request in trust mode).
    func userID() throws -> Int {
        try #require((try get("/api/me").json["user"] as? [String: Any])?["id"] as? Int)
    }
}

extension Dictionary where Key == String, Value == Any {
    var id: Int { self["id"] as! Int }
    func int(_ key: String) -> Int? { self[key] as? Int }
}

/// A 16 x 16 JPEG (made by Pillow): the image pipeline decodes every upload, so test images
/// must be real ones.
private let tinyJPEG: [UInt8] = {
    let hex =
    "ffd8ffe000104a46494600010100000100010000ffdb00430006040506050406060506070706080a100a0a09090a140e" +
    "0f0c1017141818171416161a1d251f1a1b231c1616202c20232627292a29191f2d302d283025282928ffdb0043010707" +
    "070a080a130a0a13281a161a282828282828282828282828282828282828282828282828282828282828282828282828" +
    "2828282828282828282828282828ffc00011080010001003012200021101031101ffc4001f0000010501010101010100" +
    "000000000000000102030405060708090a0bffc400b5100002010303020403050504040000017d010203000411051221" +
    "31410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a25262728292a3435363738393a" +
    "434445464748494a535455565758595a636465666768696a737475767778797a838485868788898a9293949596979899" +
    "9aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1" +
    "f2f3f4f5f6f7f8f9faffc4001f0100030101010101010101010000000000000102030405060708090a0bffc400b51100" +
    "020102040403040705040400010277000102031104052131061241510761711322328108144291a1b1c109233352f015" +
    "6272d10a162434e125f11718191a262728292a35363738393a434445464748494a535455565758595a63646566676869" +
    "6a737475767778797a82838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4" +
    "c5c6c7c8c9cad2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8e9eaf2f3f4f5f6f7f8f9faffda000c03010002110311003f00c0" +
    "a28a2bef4f893fffd9"
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        bytes.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}()

/// An 8 x 8 PNG (made by Pillow).
let tinyPNG: [UInt8] = [
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48,
    0x44, 0x52, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x08, 0x08, 0x02, 0x00, 0x00,
    0x00, 0x4B, 0x6D, 0x29, 0xDC, 0x00, 0x00, 0x00, 0x14, 0x49, 0x44, 0x41, 0x54, 0x78,
    0x9C, 0x63, 0x3C, 0x61, 0x23, 0xC7, 0x80, 0x0D, 0x30, 0x61, 0x15, 0x1D, 0xB4, 0x12,
    0x00, 0xE7, 0xFE, 0x01, 0x32, 0x06, 0xF2, 0x33, 0xA9, 0x00, 0x00, 0x00, 0x00, 0x49,
    0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
]

/// A real JPEG of `size` bytes (at least the tiny one's 633): the 16 x 16 image with comment
/// segments of seeded filler after its start marker. The pipeline drops comments, so what
/// is stored is the small image whatever the size sent.
func jpegBytes(size: Int, seed: UInt64 = 1) -> [UInt8] {
    var state = seed
    var out: [UInt8] = [0xFF, 0xD8]
    var left = max(0, size - tinyJPEG.count)
    while left > 0 {
        // A comment segment: FF FE, a two-byte length counting itself, then its bytes.
        let payload = min(left, 65_535) < 4 ? 0 : min(left, 65_535) - 4
        guard payload > 0 else { break }
        let length = payload + 2
        out += [0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)]
        for _ in 0..<payload {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            out.append(UInt8(truncatingIfNeeded: state >> 33))
        }
        left -= payload + 4
    }
    return out + tinyJPEG.dropFirst(2)
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
