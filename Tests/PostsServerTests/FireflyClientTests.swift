import Foundation
import PostsServer
import Testing
import TestSupport

/// The firefly iOS client's models, exactly as API.md quotes them: a client built against
/// the app this server replaces must decode every answer unchanged.
private struct Post: Codable { let id: Int; let userId: Int; let parentId: Int?; let title: String
  let summary: String; let body: String; let imageUrl: String?; let createdAt: String
  let timezone: String; let locationTag: String?; let aiGenerated: Bool
  let authorName: String?; let childCount: Int? }          // snake_case keys on the wire
private struct PostsResponse: Codable { let status: String; let posts: [Post] }
private struct SinglePostResponse: Codable { let status: String; let post: Post }
private struct ChildrenResponse: Codable { let status: String; let postId: Int   // "post_id"
  let children: [Post]; let count: Int }

@Suite struct FireflyClientTests {
    private static func decode<T: Decodable>(_ type: T.Type, _ response: RawHTTPClient.Response) throws -> T {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(type, from: Data(response.body))
    }

    /// The firefly form, as the app sends it (text parts, then `image` as image.jpg), then
    /// the three reads it makes, each decoded with its own structs.
    @Test func fireflyForm_andReads_decodeWithTheClientsModels() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let image = jpegBytes(size: 200_000)

        var root = MultipartBody()
        for (name, value) in [("email", "ash@example.com"), ("title", "From the app"), ("summary", "A summary"),
                              ("body", "Posted with an image"), ("timezone", "Europe/Paris"), ("parent_id", "")] {
            root.field(name, value)
        }
        root.file("image", filename: "image.jpg", type: "image/jpeg", image)
        let created = try client.send("POST", "/api/posts/create", body: root.finished, contentType: MultipartBody.contentType)
        #expect(created.status == 201, "\(created.text)")
        let post = try Self.decode(SinglePostResponse.self, created).post
        #expect(post.title == "From the app" && post.parentId == nil && post.timezone == "Europe/Paris")
        #expect(post.authorName == "ash" && post.childCount == 0)
        let imageURL = try #require(post.imageUrl)
        #expect(imageURL.firstMatch(of: /^\/uploads\/[0-9a-f]{32}\.jpg$/) != nil)
        let served = try client.get(imageURL)
        // A JPEG the server made again: the comments that padded it to 200 KB are gone.
        #expect(served.status == 200 && served.body.starts(with: [0xFF, 0xD8, 0xFF]) && served.body.count < image.count)
        #expect(served.header("Content-Type") == "image/jpeg")

        var reply = MultipartBody()
        for (name, value) in [("email", "blair@example.com"), ("title", "A reply"), ("summary", "s"), ("body", "b"),
                              ("timezone", "UTC"), ("parent_id", "\(post.id)")] {
            reply.field(name, value)
        }
        let child = try Self.decode(SinglePostResponse.self, client.send(
            "POST", "/api/posts/create", body: reply.finished, contentType: MultipartBody.contentType)).post
        #expect(child.parentId == post.id && child.imageUrl == nil)

        let recent = try Self.decode(PostsResponse.self, client.get("/api/posts/recent?limit=50"))
        #expect(recent.status == "success" && recent.posts.map(\.id) == [child.id, post.id])
        let single = try Self.decode(SinglePostResponse.self, client.get("/api/posts/\(post.id)"))
        #expect(single.post.childCount == 1)
        let children = try Self.decode(ChildrenResponse.self, client.get("/api/posts/\(post.id)/children"))
        #expect(children.postId == post.id && children.count == 1 && children.children.first?.title == "A reply")
    }
}
