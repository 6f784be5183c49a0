import Foundation
import PostsClient
import PostsServer
import Testing
import TestSupport

/// The account calls as an app makes them: sessions, the export, and deleting the account.
@Suite struct ClientAccountTests {
    @Test func sessions_export_andDeletion() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let blair = try await server.signedIn("blair@example.com")

        let sessions = try await ash.sessions()
        #expect(sessions.count == 1 && sessions[0].current)
        #expect(try await ash.revokeOtherSessions() == 0)

        let kept = try await ash.createPost(draft("kept as a tombstone"))
        _ = try await blair.createPost(draft("a reply", parent: kept.id))
        let export = try await ash.exportAccount()
        let document = try #require(try JSONSerialization.jsonObject(with: export) as? [String: Any])
        #expect((document["posts"] as? [[String: Any]])?.first?["title"] as? String == "kept as a tombstone")

        try await ash.deleteAccount()
        #expect(!ash.isSignedIn)
        let tombstone = try await blair.post(id: kept.id)
        #expect(tombstone.isTombstone && tombstone.title == "[deleted]" && tombstone.authorName == "deleted")
        let refused = await #expect(throws: PostsAPIError.self) { try await blair.like(postID: kept.id) }
        #expect(refused?.status == 410)
    }
}
