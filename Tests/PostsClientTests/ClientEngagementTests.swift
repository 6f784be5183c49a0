import Foundation
import PostsClient
import Testing
// Swift Testing has a `Comment` too; this file means the model.
import struct PostsClient.Comment

/// Likes and comments through the client, with their pages.
@Suite struct ClientEngagementTests {
    @Test func likeUnlikeToggle_andTheLikers() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let blair = try await server.signedIn("blair@example.com")
        let post = try await ash.createPost(draft("likeable"))

        #expect(try await ash.like(postID: post.id) == LikeState(postID: post.id, liked: true, likeCount: 1))
        #expect(try await ash.like(postID: post.id).likeCount == 1)
        #expect(try await blair.toggleLike(postID: post.id) == LikeState(postID: post.id, liked: true, likeCount: 2))
        #expect(try await ash.post(id: post.id).likedByMe == true)
        let likers = try await ash.likers(of: post.id, pageSize: 1).collect()
        #expect(likers.map(\.username) == ["blair", "ash"])
        #expect(try await ash.unlike(postID: post.id) == LikeState(postID: post.id, liked: false, likeCount: 1))
        #expect(try await blair.toggleLike(postID: post.id).liked == false)
        let missing = await #expect(throws: PostsAPIError.self) { try await ash.like(postID: 999) }
        #expect(missing?.code == .notFound)
    }

    @Test func comments_pagedOldestFirst_deletedByTheirAuthorOnly() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let blair = try await server.signedIn("blair@example.com")
        let post = try await ash.createPost(draft("talked about"))

        var written: [Comment] = []
        for index in 0..<5 { written.append(try await (index.isMultiple(of: 2) ? ash : blair).addComment("  comment \(index) ", to: post.id)) }
        #expect(written[0].body == "comment 0" && written[1].profile.username == "blair" && written[0].postID == post.id)
        // A signed-in read adds `likedByMe`, which the create's answer (the change's comment) has not.
        let read = try await ash.comments(on: post.id, pageSize: 2).collect()
        #expect(read.map(\.id) == written.map(\.id) && read.map(\.body) == written.map(\.body))
        #expect(read.allSatisfy { $0.likedByMe == false } && written.allSatisfy { $0.likedByMe == nil })
        #expect(try await ash.post(id: post.id).commentCount == 5)

        let notYours = await #expect(throws: PostsAPIError.self) { try await blair.deleteComment(id: written[0].id) }
        #expect(notYours?.status == 403 && notYours?.code == .forbidden)
        try await ash.deleteComment(id: written[0].id)
        #expect(try await ash.comments(on: post.id).collect().map(\.id) == written.dropFirst().map(\.id))
        let tooLong = await #expect(throws: PostsAPIError.self) { try await ash.addComment(String(repeating: "é", count: 2201), to: post.id) }
        #expect(tooLong?.status == 422)
    }
}
