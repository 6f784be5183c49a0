import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PostsClient
import Testing
import TestSupport

/// Images as an app uses them (API.md "Images for phones"): a post's image measured for
/// layout, its copies at the five widths, and an avatar set, replaced and removed.
@Suite struct ClientImagesTests {
    /// The status of a read of `path` once it fails: a replaced or removed image is deleted
    /// by the storage worker the commit wakes, so it may be served a moment after the
    /// answer (CHANGELOG). Nil if it is still served after 30 s.
    private static func statusOnceGone(_ path: String, from client: PostsClient) async -> Int? {
        var status: Int?
        _ = await eventually(timeout: .seconds(30)) {
            do {
                _ = try await client.imageData(path)
                return false
            } catch {
                status = (error as? PostsAPIError)?.status
                return true
            }
        }
        return status
    }

    @Test func sizesForLayout_copiesAtAWidth_andAvatars() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")

        let post = try await ash.createPost(draft("a photo"), image: .png(pngBytes))
        let path = try #require(post.imageURL)
        #expect(post.imageWidth == 800 && post.imageHeight == 600)
        let read = try await ash.post(id: post.id)
        #expect(read.imageWidth == 800 && read.imageHeight == 600)
        let words = try await ash.createPost(draft("no image"))
        #expect(words.imageWidth == nil && words.imageHeight == nil)

        // A copy at a width: its own URL, aspect kept, never scaled up.
        #expect(ash.imageURL(path, width: .w320)?.absoluteString == "\(server.baseURL.absoluteString)\(path)?width=320")
        #expect(pngSize(try await ash.imageData(path, width: .w320)) == [320, 240])
        #expect(pngSize(try await ash.imageData(path, width: .w1080)) == [800, 600])

        // An avatar: square around the centre, at most 512 px; the one it replaces is gone.
        let first = try await ash.setAvatar(.png(pngBytes, filename: "me.png"))
        let firstAvatar = try #require(first.avatarURL)
        #expect(pngSize(try await ash.imageData(firstAvatar)) == [512, 512])
        #expect(try await server.client().profile(userID: first.userID).avatarURL == firstAvatar)
        let second = try await ash.setAvatar(imageData: pngBytes, filename: "again.png", contentType: "image/png")
        let secondAvatar = try #require(second.avatarURL)
        #expect(secondAvatar != firstAvatar)
        #expect(await Self.statusOnceGone(firstAvatar, from: ash) == 404)

        let removed = try await ash.removeAvatar()
        #expect(removed.avatarURL == nil && removed.userID == first.userID)
        #expect(await Self.statusOnceGone(secondAvatar, from: ash) == 404)

        let notAnImage = await #expect(throws: PostsAPIError.self) {
            try await ash.setAvatar(ImageUpload(data: Data("text".utf8), filename: "a.txt", contentType: "text/plain"))
        }
        #expect(notAnImage?.status == 415 && notAnImage?.code == .unsupportedMediaType)
        let anonymous = await #expect(throws: PostsAPIError.self) { try await server.client().setAvatar(.png(pngBytes)) }
        #expect(anonymous?.status == 401)
    }

    /// What goes on the wire: a PUT of a multipart form whose one file part is `image`, and
    /// a DELETE without a body, both to the caller's own avatar.
    @Test func avatarCalls_requestShape() async throws {
        let profile = #"{"user_id":3,"username":"ash","full_name":"","bio":"","avatar_url":"/uploads/9f86d081884c7d659a2feaa0c55ad015.jpg","created_at":"2026-11-20T14:03:07.123Z"}"#
        let transport = RecordingTransport(script: [
            .answer(status: 200, headers: [:], body: #"{"status":"success","profile":\#(profile)}"#),
            .answer(status: 200, headers: [:], body: #"{"status":"success","profile":\#(profile.replacingOccurrences(of: #""/uploads/9f86d081884c7d659a2feaa0c55ad015.jpg""#, with: "null"))}"#),
        ])
        let client = PostsClient(baseURL: URL(string: "http://127.0.0.1:9/posts")!, token: "t", transport: transport)

        let set = try await client.setAvatar(imageData: Data([0xFF, 0xD8, 0xFF]), filename: "me.heic", contentType: "image/heic")
        #expect(set.avatarURL == "/uploads/9f86d081884c7d659a2feaa0c55ad015.jpg")
        #expect(try await client.removeAvatar().avatarURL == nil)

        let (put, delete) = (transport.requests[0], transport.requests[1])
        #expect(put.httpMethod == "PUT" && put.url?.absoluteString == "http://127.0.0.1:9/posts/api/profiles/me/avatar")
        #expect(put.value(forHTTPHeaderField: "Authorization") == "Bearer t")
        let contentType = try #require(put.value(forHTTPHeaderField: "Content-Type"))
        #expect(contentType.hasPrefix("multipart/form-data; boundary="))
        let body = String(decoding: try #require(put.httpBody), as: UTF8.self)
        #expect(body.contains("Content-Disposition: form-data; name=\"image\"; filename=\"me.heic\"\r\nContent-Type: image/heic\r\n"))
        #expect(body.components(separatedBy: "Content-Disposition").count == 2)
        #expect(delete.httpMethod == "DELETE" && delete.url?.path == "/posts/api/profiles/me/avatar")
        #expect(delete.httpBody == nil)
    }

    @Test func imageURLs_atAWidth() {
        let client = PostsClient(baseURL: URL(string: "https://posts.example.com/base")!)
        let path = "/uploads/9f86d081884c7d659a2feaa0c55ad015.jpg"
        #expect(client.imageURL(path, width: .w640)?.absoluteString == "https://posts.example.com/base\(path)?width=640")
        // Another server's image has no widths: its URL as it is.
        #expect(client.imageURL("https://cdn.example.org/a.png", width: .w160)?.absoluteString == "https://cdn.example.org/a.png")
        #expect(client.imageURL(nil, width: .w160) == nil)
        #expect(ImageWidth.allCases.map(\.pixels) == [160, 320, 640, 1080, 1600])
    }

    /// A view's width in pixels picks the narrowest copy that fills it.
    @Test func imageWidth_atLeast() {
        #expect(ImageWidth(atLeast: 0) == .w160)
        #expect(ImageWidth(atLeast: 160) == .w160)
        #expect(ImageWidth(atLeast: 161) == .w320)
        #expect(ImageWidth(atLeast: 390 * 2) == .w1080)
        #expect(ImageWidth(atLeast: 430 * 3) == .w1600)
        #expect(ImageWidth(atLeast: 10_000) == .w1600)
        #expect(ImageWidth.w320 < .w640)
    }
}
