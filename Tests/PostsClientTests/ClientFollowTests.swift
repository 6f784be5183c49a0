import Foundation
import PostsClient
import Testing

/// Follows and the home feed through the client, against the real server.
@Suite struct ClientFollowTests {
    @Test func follow_pages_profileCounters_andTheFeed() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let blair = try await server.signedIn("blair@example.com")
        let carol = try await server.signedIn("carol@example.com")
        let blairs = try await blair.createPost(draft("blair's"))
        let carols = try await carol.createPost(draft("carol's"))
        let (blairID, carolID) = (blairs.userID, carols.userID)

        #expect(try await ash.follow(userID: blairID) == FollowState(userID: blairID, following: true, followersCount: 1))
        #expect(try await ash.follow(userID: blairID).followersCount == 1)
        _ = try await ash.follow(userID: carolID)
        let own = try await ash.createPost(draft("ash's", parent: carols.id))
        #expect(try await ash.feed(pageSize: 1).collect().map(\.id) == [own.id, carols.id, blairs.id])

        let ashID = own.userID
        let following = try await ash.following(of: ashID, pageSize: 1).collect()
        #expect(following.map(\.userID) == [carolID, blairID] && following.allSatisfy { $0.followedByMe == true })
        #expect(try await server.client().followers(of: blairID).collect().map(\.userID) == [ashID])
        let profile = try await ash.profile(userID: ashID)
        #expect(profile.followingCount == 2 && profile.followersCount == 0 && profile.postsCount == 1)
        #expect(try await blair.profile(userID: blairID).followersCount == 1)

        #expect(try await ash.unfollow(userID: blairID) == FollowState(userID: blairID, following: false, followersCount: 0))
        #expect(try await ash.feed().collect().map(\.id) == [own.id, carols.id])
        let oneself = await #expect(throws: PostsAPIError.self) { try await ash.follow(userID: ashID) }
        #expect(oneself?.code == .validationFailed)
        let unknown = await #expect(throws: PostsAPIError.self) { try await ash.follow(userID: 999_999) }
        #expect(unknown?.code == .notFound)
    }

    @Test func aProfile_withoutCounters_decodesWithZeros() throws {
        let json = #"{"user_id":3,"username":"ash","full_name":"Ash N","bio":"","avatar_url":null,"created_at":"2026-11-20T14:03:07.123Z"}"#
        let profile = try ModelDecodingTests.decode(Profile.self, json)
        #expect(profile.followersCount == 0 && profile.postsCount == 0 && profile.followedByMe == nil)
        let change = try ModelDecodingTests.decode(Change.self, #"{"seq":"AAAB","type":"follow.changed","at":"2026-11-20T14:05:00.000Z","user_id":3,"follower_id":3,"followee_id":4,"following":true,"followers_count":7,"following_count":2}"#)
        #expect(change.type == .followChanged && change.followeeID == 4 && change.following == true && change.followersCount == 7)
    }
}
