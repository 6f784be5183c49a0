import Foundation
import PostsClient
import PostsServer
import Testing

/// The moderators' calls through the client, against the real server: who may make them,
/// the queue, each resolution, suspension and its undoing, and the log.
@Suite struct ClientModerationTests {
    /// A signed-in moderator. Only the operator grants roles (`posts-server role EMAIL
    /// moderator`); `Roles.grant` is what that command runs.
    private static func moderator(_ email: String, on server: ClientTestServer) async throws -> PostsClient {
        let client = try await server.signedIn(email)
        let change = try Roles.grant("moderator", toEmail: email, conninfo: try #require(server.app.configuration.directDatabaseURL))
        #expect(change?.now == "moderator")
        return client
    }

    @Test func nonModerators_areRefusedEveryModerationCall() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let me = try await ash.me().user
        #expect(me.role == .user && !me.isModerator && me.suspended == false)
        let calls: [@Sendable () async throws -> Void] = [
            { _ = try await ash.moderationReports().collect() },
            { _ = try await ash.moderationReports(status: .resolved).collect() },
            { _ = try await ash.moderationLog().collect() },
            { try await ash.resolveReport(id: 1, action: .dismiss) },
            { try await ash.suspend(userID: me.id) },
            { try await ash.unsuspend(userID: me.id, note: "me") },
        ]
        for call in calls {
            let refused = await #expect(throws: PostsAPIError.self) { try await call() }
            #expect(refused?.status == 403 && refused?.refusal == .moderatorsOnly)
        }
        let mod = try await Self.moderator("mod@example.com", on: server)
        #expect(try await mod.me().user.isModerator)
        #expect(try await mod.moderationReports().collect().isEmpty)
        let unknown = await #expect(throws: PostsAPIError.self) { try await mod.resolveReport(id: 999, action: .dismiss) }
        #expect(unknown?.code == .notFound)
    }

    @Test func queue_removeAndDismiss_closeEveryReportOnTheTarget_andAreLogged() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let blair = try await server.signedIn("blair@example.com")
        let carol = try await server.signedIn("carol@example.com")
        let spam = try await ash.createPost(draft("spam"))
        let kept = try await ash.createPost(draft("with a reply"))
        _ = try await blair.createPost(draft("blair's reply", parent: kept.id))
        let comment = try await ash.addComment("borderline", to: kept.id)
        for reporter in [blair, carol] { try await reporter.report(.post(spam.id), reason: .spam, details: "ads") }
        try await blair.report(.post(kept.id), reason: .other)
        try await carol.report(.comment(comment.id), reason: .harassment)
        let mod = try await Self.moderator("mod@example.com", on: server)

        // Oldest first, across pages, each with its reporter and its target as it is now.
        let queue = try await mod.moderationReports(pageSize: 3).collect()
        #expect(queue.map(\.reason) == [.spam, .spam, .other, .harassment])
        #expect(queue[0].reporter.username == "blair" && queue[0].details == "ads" && queue[0].reportsOnTarget == 2)
        guard case .post(let reported?)? = queue[0].target else { Issue.record("\(String(describing: queue[0].target))"); return }
        #expect(reported.title == "spam")
        #expect(queue[3].target == .comment(comment))

        // remove: the spam post goes, and both reports on it close.
        try await mod.resolveReport(id: queue[0].id, action: .remove, note: "ads")
        let gone = await #expect(throws: PostsAPIError.self) { try await ash.post(id: spam.id) }
        #expect(gone?.code == .notFound)
        let twice = await #expect(throws: PostsAPIError.self) { try await mod.resolveReport(id: queue[1].id, action: .dismiss) }
        #expect(twice?.status == 409 && twice?.code == .conflict)
        // remove of a post others replied under leaves a tombstone; dismiss leaves the comment.
        try await mod.resolveReport(id: queue[2].id, action: .remove)
        #expect(try await ash.post(id: kept.id).isTombstone)
        #expect(try await ash.children(of: kept.id).collect().count == 1)
        try await mod.resolveReport(id: queue[3].id, action: .dismiss, note: "fair comment")
        // By id: a signed-in read adds `likedByMe`, which the create's answer has not,
        // and its author's profile in it counts one post less now.
        #expect(try await ash.comments(on: kept.id).collect().map(\.id) == [comment.id])

        #expect(try await mod.moderationReports().collect().isEmpty)
        #expect(try await mod.moderationReports(status: .resolved).collect().map(\.status) == Array(repeating: .resolved, count: 4))
        let log = try await mod.moderationLog(pageSize: 2).collect()
        #expect(log.map(\.action) == [.dismiss, .remove, .remove])
        #expect(log[0].target == .comment(comment.id) && log[0].note == "fair comment" && log[0].reportID == queue[3].id)
        #expect(log[2].target == .post(spam.id) && log[2].note == "ads" && log[2].moderator?.username == "mod")
    }

    @Test func suspension_byReportAndDirectly_refusesSignIn_hidesContent_andIsUndone() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let blair = try await server.signedIn("blair@example.com")
        let post = try await ash.createPost(draft("by ash"))
        let ashID = post.userID
        try await blair.report(.user(ashID), reason: .harassment)
        let mod = try await Self.moderator("mod@example.com", on: server)
        let report = try #require(try await mod.moderationReports().collect().first)
        // Read anonymously, as the queue shows it: without blair's `followedByMe`.
        #expect(report.target == .user(try await server.client().profile(userID: ashID)))
        let notRemovable = await #expect(throws: PostsAPIError.self) { try await mod.resolveReport(id: report.id, action: .remove) }
        #expect(notRemovable?.code == .validationFailed)

        try await mod.resolveReport(id: report.id, action: .suspend, note: "repeated")
        // The session ends; signing in again is the typed refusal; the content is hidden.
        let ended = await #expect(throws: PostsAPIError.self) { try await ash.me() }
        #expect(ended?.code == .unauthorized)
        let refused = await #expect(throws: PostsAPIError.self) { _ = try await server.signedIn("ash@example.com") }
        #expect(refused?.status == 403 && refused?.refusal == .accountSuspended)
        let hidden = await #expect(throws: PostsAPIError.self) { try await server.client().post(id: post.id) }
        #expect(hidden?.code == .notFound)

        #expect(try await mod.unsuspend(userID: ashID, note: "appeal") == SuspensionState(userID: ashID, suspended: false))
        #expect(try await server.client().post(id: post.id).title == "by ash")
        let back = try await server.signedIn("ash@example.com")
        #expect(try await back.me().user.isSuspended == false)

        // Directly, without a report.
        #expect(try await mod.suspend(userID: ashID) == SuspensionState(userID: ashID, suspended: true))
        #expect(try await mod.unsuspend(userID: ashID).suspended == false)
        let nobody = await #expect(throws: PostsAPIError.self) { try await mod.suspend(userID: 999_999) }
        #expect(nobody?.code == .notFound)

        let log = try await mod.moderationLog().collect()
        #expect(log.map(\.action) == [.unsuspend, .suspend, .unsuspend, .suspend])
        #expect(log.allSatisfy { $0.target == .user(ashID) })
        #expect(log[0].reportID == nil && log[2].note == "appeal" && log[3].reportID == report.id && log[3].note == "repeated")
    }
}
