import Foundation
@testable import PostsClient
import Testing

/// Notifications through the client, against the real server: the model (known, unknown
/// and id-less types), the list with its pages and unread count, and marking read.
@Suite struct ClientNotificationsTests {
    private static let time = "2026-11-20T14:05:00.000Z"
    private static let commentID = "7d0b2c9e-4f7c-4bd4-9a57-0d8b4c1e2f3a"

    /// A signed-in client and its user's id.
    private static func user(_ email: String, on server: ClientTestServer) async throws -> (PostsClient, Int) {
        let client = server.client()
        return (client, try await client.developmentSignIn(email: email).userID)
    }

    @Test func theModel_decodesEveryType_unknownOnesToo_withNullIds() throws {
        func notification(_ type: String, post: String = "null", comment: String = "null") throws -> PostsNotification {
            try ModelDecodingTests.decode(PostsNotification.self, #"{"id":41,"type":"\#(type)","created_at":"\#(Self.time)","read":false,"actor":\#(ModelDecodingTests.profile),"post_id":\#(post),"comment_id":\#(comment)}"#)
        }
        let commented = try notification("post.commented", post: "12", comment: #""\#(Self.commentID)""#)
        #expect(commented.id == 41 && commented.type == .postCommented && !commented.read)
        #expect(commented.postID == 12 && commented.commentID == UUID(uuidString: Self.commentID))
        #expect(commented.actor.username == "ash" && commented.createdAt == APIDateCoding.date(from: Self.time))
        let followed = try notification("followed")
        #expect(followed.type == .followed && followed.postID == nil && followed.commentID == nil)
        let known: [NotificationType] = [.postLiked, .commentLiked, .postCommented, .commentReplied, .postReplied, .mentioned, .followed]
        #expect(try known.map { try notification($0.rawValue, post: "3").type } == known)
        // A type this client does not know yet still decodes, and keeps its name.
        let future = try notification("poll.voted", post: "3")
        #expect(future.type == NotificationType(rawValue: "poll.voted") && future.type.description == "poll.voted")
        // Members the server leaves out read as nil, as null ones do.
        let bare = try ModelDecodingTests.decode(PostsNotification.self, #"{"id":1,"type":"followed","created_at":"\#(Self.time)","read":true,"actor":\#(ModelDecodingTests.profile)}"#)
        #expect(bare.read && bare.postID == nil && bare.commentID == nil)
    }

    @Test func theList_pagesNewestFirst_countsUnread_andMarksRead() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let (ash, ashID) = try await Self.user("ash@example.com", on: server)
        let (blair, _) = try await Self.user("blair@example.com", on: server)
        let (cleo, _) = try await Self.user("cleo@example.com", on: server)
        let post = try await ash.createPost(draft("ash's"))
        try await blair.like(postID: post.id)
        let comment = try await cleo.addComment("nice", to: post.id)
        _ = try await blair.follow(userID: ashID)
        _ = try await cleo.follow(userID: ashID)
        // One's own acts notify no one.
        try await ash.like(postID: post.id)

        let pages = try await ash.notifications(pageSize: 2).pages.reduce(into: [[PostsNotification]]()) { $0.append($1.items) }
        #expect(pages.map(\.count) == [2, 2])
        let listed = pages.flatMap { $0 }
        #expect(listed.map(\.type) == [.followed, .followed, .postCommented, .postLiked])
        #expect(listed.map(\.actor.username) == ["cleo", "blair", "cleo", "blair"])
        #expect(listed[2].postID == post.id && listed[2].commentID == comment.id)
        #expect(listed[3].postID == post.id && listed[3].commentID == nil && listed[0].postID == nil)
        #expect(listed.allSatisfy { !$0.read } && listed.map(\.id) == listed.map(\.id).sorted(by: >))
        #expect(try await ash.unreadNotificationCount() == 4)
        #expect(try await blair.notifications().collect().isEmpty)
        #expect(try await blair.unreadNotificationCount() == 0)

        // Up to the comment's: it and the older like; the follows stay unread.
        #expect(try await ash.markNotificationsRead(upTo: listed[2].id) == 2)
        #expect(try await ash.notifications().collect().map(\.read) == [false, false, true, true])
        #expect(try await ash.unreadNotificationCount() == 2)
        #expect(try await ash.markNotificationsRead() == 0)
        #expect(try await ash.markNotificationsRead() == 0)
        #expect(try await ash.notifications().collect().allSatisfy(\.read))

        // Undone, gone: the unlike takes Blair's like away.
        try await blair.unlike(postID: post.id)
        #expect(try await ash.notifications().collect().map(\.type) == [.followed, .followed, .postCommented])
        let anonymous = await #expect(throws: PostsAPIError.self) { try await server.client().unreadNotificationCount() }
        #expect(anonymous?.code == .unauthorized)
    }
}
