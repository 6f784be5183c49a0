import Foundation
@testable import PostsClient
import Testing
import TestSupport

/// Notifications through the client, against the real server: the model (known, unknown
/// and id-less types), the list with its pages and unread count, marking read, and the
/// live stream, its resume across a restart included.
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
        let server = try ClientTestServer.start(cluster: .changes)
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

    @Test func live_theCallersOwnAlone_asTheListHasThem() async throws {
        try await withDeadline {
            let server = try ClientTestServer.start(cluster: .changes)
            defer { server.stop() }
            let (ash, ashID) = try await Self.user("ash@example.com", on: server)
            let (blair, _) = try await Self.user("blair@example.com", on: server)
            let (_, cleoID) = try await Self.user("cleo@example.com", on: server)
            let post = try await ash.createPost(draft("ash's"))
            // From a position taken before the acts: nothing done before the stream's head is lost.
            var events = ash.notificationEvents(since: try await ash.changesPosition()).makeAsyncIterator()
            // Cleo's notification goes to Cleo's streams, not Ash's.
            _ = try await blair.follow(userID: cleoID)
            _ = try await blair.follow(userID: ashID)
            try await blair.like(postID: post.id)

            let followed = try #require(try await events.next())
            #expect(followed.type == .followed && followed.actor.username == "blair" && !followed.read)
            let liked = try #require(try await events.next())
            #expect(liked.type == .postLiked && liked.postID == post.id && liked.id > followed.id)
            #expect(try await ash.notifications().collect() == [liked, followed])
            #expect(events.lastEventID != nil)

            var anonymous = server.client().notificationEvents().makeAsyncIterator()
            let refused = await #expect(throws: PostsAPIError.self) { _ = try await anonymous.next() }
            #expect(refused?.status == 401)
        }
    }

    @Test func live_resumesAcrossARestart_withoutGapOrDuplicate() async throws {
        try await withDeadline {
            var server = try ClientTestServer.start(cluster: .changes)
            defer { server.stop() }
            let (ash, ashID) = try await Self.user("ash@example.com", on: server)
            let (blair, _) = try await Self.user("blair@example.com", on: server)
            let post = try await ash.createPost(draft("ash's"))
            // Reconnects every 100 ms at most, for as long as a slow machine takes to restart.
            let patient = RetryPolicy(maxAttempts: 200, initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100))
            var events = ash.notificationEvents(since: try await ash.changesPosition(), reconnect: patient).makeAsyncIterator()
            _ = try await blair.follow(userID: ashID)
            let first = try #require(try await events.next())
            #expect(first.type == .followed)
            let resumeFrom = events.lastEventID

            // Another instance on the same database takes Blair's like while this one is
            // down: only a resume with Last-Event-ID can deliver it.
            let other = try TestApplication.start(conninfo: server.app.configuration.databaseURL)
            defer { other.stop() }
            let viaOther = PostsClient(baseURL: URL(string: "http://127.0.0.1:\(other.server.port)")!, token: blair.token)
            try await server.restart {
                try await viaOther.like(postID: post.id)
            }
            let comment = try await blair.addComment("back again", to: post.id)

            let second = try #require(try await events.next())
            #expect(second.type == .postLiked && second.postID == post.id)
            let third = try #require(try await events.next())
            #expect(third.type == .postCommented && third.commentID == comment.id)
            #expect(events.lastEventID != resumeFrom)
            // The list agrees: each once.
            #expect(try await ash.notifications().collect().map(\.id) == [third.id, second.id, first.id])
        }
    }
}
