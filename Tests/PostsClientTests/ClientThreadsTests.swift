import Foundation
@testable import PostsClient
import Testing
// Swift Testing has a `Comment` too; this file means the model.
import struct PostsClient.Comment

/// Threads, comment likes and mentions through the client, against the real server, and
/// the new fields' decoding (present, absent).
@Suite struct ClientThreadsTests {
    @Test func replies_likes_andMentions() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let blair = try await server.signedIn("blair@example.com")
        let post = try await ash.createPost(NewPost(title: "Hi @blair", summary: "s", body: "b"))
        #expect(post.mentions?.map(\.username) == ["blair"])
        #expect(post.mentions?.first.flatMap { $0.range(in: post.title) }.map { String(post.title[$0]) } == "@blair")

        let top = try await ash.addComment("top, for 🎉@blair", to: post.id)
        #expect(top.replyTo == nil && top.replyCount == 0 && top.mentions?.count == 1)
        let reply = try await blair.addComment("a reply", to: post.id, replyTo: top.id)
        let deeper = try await ash.addComment("deeper", to: post.id, replyTo: reply.id)
        #expect(reply.replyTo == top.id && deeper.replyTo == top.id && deeper.isReply)
        #expect(try await ash.comments(on: post.id).collect().map(\.replyCount) == [2])
        #expect(try await ash.comments(on: post.id, includingReplies: true).collect().map(\.body) == ["top, for 🎉@blair", "a reply", "deeper"])
        #expect(try await ash.replies(to: top.id, pageSize: 1).collect().map(\.id) == [reply.id, deeper.id])

        #expect(try await blair.likeComment(id: top.id) == CommentLikeState(commentID: top.id, liked: true, likeCount: 1))
        #expect(try await blair.likeComment(id: top.id).likeCount == 1)
        #expect(try await blair.comments(on: post.id).collect().first?.likedByMe == true)
        #expect(try await blair.unlikeComment(id: top.id) == CommentLikeState(commentID: top.id, liked: false, likeCount: 0))
        let missing = await #expect(throws: PostsAPIError.self) { try await ash.likeComment(id: UUID()) }
        #expect(missing?.code == .notFound)
        let otherPost = try await ash.createPost(NewPost(title: "other", summary: "s", body: "b"))
        let wrongPost = await #expect(throws: PostsAPIError.self) { try await ash.addComment("x", to: otherPost.id, replyTo: top.id) }
        #expect(wrongPost?.status == 422)
    }

    @Test func newFields_decode_andOldAnswersStillDo() throws {
        let profile = ModelDecodingTests.profile
        let old = #"{"id":"7d0b2c9e-0000-4000-8000-000000000001","post_id":12,"user_id":3,"body":"nice","created_at":"2026-11-20T14:05:00.000Z","profile":\#(profile)}"#
        let plain = try ModelDecodingTests.decode(Comment.self, old)
        #expect(plain.replyTo == nil && plain.replyCount == nil && plain.likeCount == nil && plain.mentions == nil)
        let threaded = old.replacingOccurrences(of: #","profile""#, with: #","reply_to":"7d0b2c9e-0000-4000-8000-000000000002","reply_count":0,"like_count":3,"mentions":[{"user_id":4,"username":"blair","field":"body","start":0,"end":6}],"liked_by_me":true,"profile""#)
        let reply = try ModelDecodingTests.decode(Comment.self, threaded)
        #expect(reply.replyTo == UUID(uuidString: "7d0b2c9e-0000-4000-8000-000000000002") && reply.likeCount == 3 && reply.likedByMe == true)
        #expect(reply.mentions == [Mention(userID: 4, username: "blair", field: "body", start: 0, end: 6)])
        #expect(try ModelDecodingTests.decode(Post.self, ModelDecodingTests.post).mentions == nil)
        let liked = #"{"seq":"AAAA","type":"comment.liked","at":"2026-11-20T14:05:00.000Z","post_id":12,"parent_id":null,"user_id":3,"comment_id":"7d0b2c9e-0000-4000-8000-000000000001","liked":true,"like_count":1}"#
        let change = try ModelDecodingTests.decode(Change.self, liked)
        #expect(change.type == .commentLiked && change.liked == true && change.likeCount == 1 && change.commentID != nil)
    }

    @Test func mentionRange_isNilOffCharacterBoundaries() {
        let text = "é @ash"
        #expect(Mention(userID: 1, username: "ash", field: "body", start: 3, end: 7).range(in: text).map { String(text[$0]) } == "@ash")
        #expect(Mention(userID: 1, username: "ash", field: "body", start: 1, end: 7).range(in: text) == nil)
        #expect(Mention(userID: 1, username: "ash", field: "body", start: 3, end: 99).range(in: text) == nil)
    }
}
