import Foundation
import PostsClient
import Testing

/// Posts through the client as an app uses them: an image upload, a tree, its pages
/// walked by the sequences, edits, moves, deletes, and the errors mapped.
@Suite struct ClientPostsTests {
    @Test func createWithImage_thenTheTree_pageByPage() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")

        let root = try await ash.createPost(draft("root"), image: .png(pngBytes))
        let imagePath = try #require(root.imageURL)
        #expect(imagePath.hasPrefix("/uploads/") && imagePath.hasSuffix(".png"))
        #expect(ash.imageURL(imagePath)?.absoluteString == "\(server.baseURL.absoluteString)\(imagePath)")
        // Made again by the server (never the bytes sent), at the size it measured.
        #expect(pngSize(try await ash.imageData(imagePath)) == [800, 600])
        #expect(root.imageWidth == 800 && root.imageHeight == 600)
        #expect(root.authorName == "ash" && root.timezone == "Europe/Paris" && root.likedByMe == false)

        var children: [Post] = []
        for index in 0..<5 { children.append(try await ash.createPost(draft("child \(index)", parent: root.id))) }
        let grandchild = try await ash.createPost(draft("grandchild", parent: children[0].id))

        // Newest first, three pages of two, the last one short; no empty extra page.
        let pages = try await ash.children(of: root.id, pageSize: 2).pages.reduce(into: [[Int]]()) { $0.append($1.items.map(\.id)) }
        #expect(pages == [[children[4].id, children[3].id], [children[2].id, children[1].id], [children[0].id]])
        var walked: [Int] = []
        for try await child in ash.children(of: root.id, pageSize: 2) { walked.append(child.id) }
        #expect(walked == children.reversed().map(\.id))
        // A full last page says so: nothing follows.
        #expect(try await ash.children(of: root.id, pageSize: 5).pages.reduce(0) { count, _ in count + 1 } == 1)

        #expect(try await ash.ancestors(of: grandchild.id).map(\.id) == [root.id, children[0].id])
        #expect(try await ash.post(id: root.id).childCount == 5)
        #expect(try await ash.posts(parent: .root).collect().map(\.id) == [root.id])
        #expect(try await ash.posts(parent: .post(children[0].id), pageSize: 1).collect().map(\.id) == [grandchild.id])
        #expect(try await ash.recentPosts(pageSize: 3).collect().count == 7)
        #expect(try await ash.posts(author: root.userID, pageSize: 4).collect().count == 7)
    }

    @Test func editMoveAndDelete() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let first = try await ash.createPost(draft("first"))
        var second = try await ash.createPost(NewPost(title: "second", summary: "s", body: "b", locationTag: "Lyon", aiGenerated: true))
        #expect(second.locationTag == "Lyon" && second.aiGenerated)

        second = try await ash.updatePost(id: second.id, PostEdits(title: "Second", locationTag: .clear), image: .png(pngBytes))
        #expect(second.title == "Second" && second.locationTag == nil && second.imageURL != nil && second.summary == "s")
        let moved = try await ash.movePost(id: second.id, toParent: first.id)
        #expect(moved.parentID == first.id)
        let cycle = await #expect(throws: PostsAPIError.self) { try await ash.movePost(id: first.id, toParent: second.id) }
        #expect(cycle?.code == .conflict)
        #expect(try await ash.movePost(id: second.id, toParent: nil).parentID == nil)

        let blair = try await server.signedIn("blair@example.com")
        let notOwner = await #expect(throws: PostsAPIError.self) { try await blair.deletePost(id: first.id) }
        #expect(notOwner?.status == 403)
        try await ash.deletePost(id: first.id)
        let gone = await #expect(throws: PostsAPIError.self) { try await ash.post(id: first.id) }
        #expect(gone?.status == 404 && gone?.code == .notFound && gone?.requestID != nil)
    }

    @Test func errors_mapToPostsAPIError() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let anonymous = server.client()
        let ash = try await server.signedIn("ash@example.com")

        let missing = await #expect(throws: PostsAPIError.self) { try await anonymous.children(of: 999).collect() }
        #expect(missing?.status == 404 && missing?.message == "no such post")
        let badPage = await #expect(throws: PostsAPIError.self) { try await ash.posts(pageSize: 0).collect() }
        #expect(badPage?.status == 400 && badPage?.code == .badRequest)
        let unauthorized = await #expect(throws: PostsAPIError.self) { try await anonymous.createPost(draft("no")) }
        #expect(unauthorized?.status == 401 && unauthorized?.code == .unauthorized)
        let empty = await #expect(throws: PostsAPIError.self) { try await ash.createPost(NewPost(title: "  ", summary: "s", body: "b")) }
        #expect(empty?.status == 422 && empty?.code == .validationFailed)
        let notAnImage = await #expect(throws: PostsAPIError.self) {
            try await ash.createPost(draft("x"), image: ImageUpload(data: Data("text".utf8), filename: "a.txt", contentType: "text/plain"))
        }
        #expect(notAnImage?.status == 415)
        let noParent = await #expect(throws: PostsAPIError.self) { try await ash.createPost(draft("orphan", parent: 999)) }
        #expect(noParent?.status == 404)
    }
}
