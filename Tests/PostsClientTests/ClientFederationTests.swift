import Foundation
import PostsClient
import PostsServer
import Testing
import TestSupport

/// Remote people through the client (API.md "Remote people"): an account of another
/// instance found by its `user@domain`, followed (pending until its server accepts), and
/// its posts in the feed.
@Suite struct ClientFederationTests {
    @Test func aRemoteAccount_isFoundFollowedAndRead() async throws {
        let here = ClientTestServer(app: try FederatedInstance.start())
        defer { here.stop() }
        let there = ClientTestServer(app: try FederatedInstance.start())
        defer { there.stop() }
        let ash = try await here.signedIn("ash@example.com")
        let blair = try await there.signedIn("blair@example.com")
        let blairs = try await blair.createPost(draft("From there"))
        let blairName = try await blair.profile(userID: blairs.userID).username
        let acct = "\(blairName)@\(FederatedInstance.domain(of: there.app))"

        let remote = try await ash.profile(acct: acct)
        #expect(remote.isRemote && remote.acct == acct && remote.username == acct)
        let asked = try await ash.follow(userID: remote.userID)
        #expect(asked.isPending && !asked.following)
        #expect(try await eventually { try await ash.profile(userID: remote.userID).followedByMe == true })
        #expect(try await ash.follow(userID: remote.userID) == FollowState(userID: remote.userID, following: true, followersCount: 1))
        // Blair's next post arrives in Ash's feed.
        _ = try await blair.createPost(draft("Second from there"))
        #expect(try await eventually { try await ash.feed().collect().map(\.title).contains("Second from there") })
        let missing = await #expect(throws: PostsAPIError.self) { try await ash.profile(acct: "nobody@\(FederatedInstance.domain(of: there.app))") }
        #expect(missing?.code == .notFound)
        #expect(try await ash.profile(userID: remote.userID).isRemote)
        #expect(try await blair.profile(userID: blairs.userID).isRemote == false)
    }
}
