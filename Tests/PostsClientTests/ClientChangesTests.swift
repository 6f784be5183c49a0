import Foundation
import PostsClient
import Testing
import TestSupport

/// Catching up after being offline: `/api/changes` walked page by page.
@Suite struct ClientChangesTests {
    @Test func changesSince_walksEveryPage_inCommitOrder_thenStops() async throws {
        let server = try ClientTestServer.start(cluster: .changes)
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let start = try await ash.changesPosition()
        let post = try await ash.createPost(draft("offline"))
        try await ash.like(postID: post.id)
        let comment = try await ash.addComment("while you were away", to: post.id)
        try await ash.updateProfile(ProfileUpdate(bio: "back"))
        try await ash.deleteComment(id: comment.id)
        // Changes become readable once no older transaction in the cluster is open (the
        // server's ordering guarantee); the live stream says when the last one is.
        try await withDeadline {
            for try await change in ash.events(since: start) where change.type == .commentDeleted { return }
        }

        var pages: [ChangesPage] = []
        for try await page in ash.changes(since: start, pageSize: 2) { pages.append(page) }
        #expect(pages.map(\.changes.count) == [2, 2, 1])
        #expect(pages.map(\.hasMore) == [true, true, false])
        let changes = pages.flatMap(\.changes)
        try #require(changes.count == 5)
        #expect(changes.map(\.type) == [.postCreated, .likeChanged, .commentCreated, .profileUpdated, .commentDeleted])
        #expect(changes[0].post?.id == post.id && changes[1].likeCount == 1 && changes[2].comment == comment)
        #expect(changes[3].profile?.bio == "back" && changes[4].commentID == comment.id && changes[4].commentCount == 0)

        // From the last cursor: nothing new, one empty page; a filter selects.
        let caughtUp = try #require(pages.last?.nextSince)
        #expect(try await ash.changes(since: caughtUp).reduce(0) { $0 + $1.changes.count } == 0)
        let likesOnly = try await ash.changes(since: start, filter: .post(post.id)).reduce(into: [ChangeType]()) { $0 += $1.changes.map(\.type) }
        #expect(likesOnly == [.postCreated, .likeChanged, .commentCreated, .commentDeleted])
    }

    @Test func aCursorBehindRetention_isGone() async throws {
        let server = try ClientTestServer.start(cluster: .changes)
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let start = try await ash.changesPosition()
        _ = try await ash.createPost(draft("soon pruned"))
        try ChangeRetention.pruneEverything(in: server.app)
        let gone = await #expect(throws: PostsAPIError.self) { try await ash.changes(since: start).collect() }
        #expect(gone?.status == 410 && gone?.code == .gone)
        let malformed = await #expect(throws: PostsAPIError.self) { try await ash.changes(since: "garbage").collect() }
        #expect(malformed?.status == 400)
    }
}

extension ChangesSequence {
    func collect() async throws -> [ChangesPage] {
        try await reduce(into: []) { $0.append($1) }
    }
}
