import Foundation
import PostsClient
import Testing

/// Blocks, mutes and reports through the client, against the real server: what each hides
/// from whom, the typed refusal of an interaction across a block, and the lists.
@Suite struct ClientSafetyTests {
    /// ash and blair, signed in, each with a root post.
    private struct Pair {
        let server: ClientTestServer
        let ash, blair: PostsClient
        let ashPost, blairPost: Post

        init() async throws {
            server = try ClientTestServer.start()
            ash = try await server.signedIn("ash@example.com")
            blair = try await server.signedIn("blair@example.com")
            ashPost = try await ash.createPost(draft("ash's"))
            blairPost = try await blair.createPost(draft("blair's"))
        }
    }

    @Test func aBlock_hidesBothWays_refusesInteractionTyped_andUnblockRestores() async throws {
        let pair = try await Pair()
        defer { pair.server.stop() }
        let (ash, blair, ashID) = (pair.ash, pair.blair, pair.ashPost.userID)
        #expect(try await blair.block(userID: ashID) == BlockState(userID: ashID, blocked: true))
        #expect(try await blair.block(userID: ashID).blocked)

        // Whoever blocked whom, neither reads the other's posts.
        #expect(try await blair.recentPosts().collect().map(\.id) == [pair.blairPost.id])
        #expect(try await ash.recentPosts().collect().map(\.id) == [pair.ashPost.id])
        let hidden = await #expect(throws: PostsAPIError.self) { try await blair.post(id: pair.ashPost.id) }
        #expect(hidden?.code == .notFound)
        for (actor, target) in [(blair, pair.ashPost.id), (ash, pair.blairPost.id)] {
            let like = await #expect(throws: PostsAPIError.self) { try await actor.like(postID: target) }
            #expect(like?.status == 403 && like?.code == .forbidden && like?.refusal == .blocked)
            let comment = await #expect(throws: PostsAPIError.self) { try await actor.addComment("hi", to: target) }
            #expect(comment?.refusal == .blocked)
            let reply = await #expect(throws: PostsAPIError.self) { try await actor.createPost(draft("reply", parent: target)) }
            #expect(reply?.refusal == .blocked)
        }
        // Anonymous reads are untouched; the list is the caller's own blocks only.
        #expect(try await pair.server.client().post(id: pair.ashPost.id).id == pair.ashPost.id)
        #expect(try await blair.blockedUsers().collect().map(\.userID) == [ashID])
        #expect(try await ash.blockedUsers().collect().isEmpty)

        #expect(try await blair.unblock(userID: ashID) == BlockState(userID: ashID, blocked: false))
        #expect(try await blair.unblock(userID: ashID).blocked == false)
        #expect(try await blair.post(id: pair.ashPost.id).id == pair.ashPost.id)
        #expect(try await blair.like(postID: pair.ashPost.id).liked)
        #expect(try await ash.addComment("friends again", to: pair.blairPost.id).postID == pair.blairPost.id)
        #expect(try await blair.blockedUsers().collect().isEmpty)
    }

    @Test func blockingOrMutingOneself_isInvalid_andAnUnknownUser_notFound() async throws {
        let pair = try await Pair()
        defer { pair.server.stop() }
        let ashID = pair.ashPost.userID
        let oneself = await #expect(throws: PostsAPIError.self) { try await pair.ash.block(userID: ashID) }
        #expect(oneself?.status == 422 && oneself?.code == .validationFailed)
        let muteOneself = await #expect(throws: PostsAPIError.self) { try await pair.ash.mute(userID: ashID) }
        #expect(muteOneself?.code == .validationFailed)
        let nobody = await #expect(throws: PostsAPIError.self) { try await pair.ash.block(userID: 999_999) }
        #expect(nobody?.code == .notFound)
        let anonymous = await #expect(throws: PostsAPIError.self) { try await pair.server.client().block(userID: ashID) }
        #expect(anonymous?.code == .unauthorized)
    }

    @Test func aMute_hidesOneWay_fromListsOnly() async throws {
        let pair = try await Pair()
        defer { pair.server.stop() }
        let (ash, blair, ashID) = (pair.ash, pair.blair, pair.ashPost.userID)
        #expect(try await blair.mute(userID: ashID) == MuteState(userID: ashID, muted: true))
        #expect(try await blair.recentPosts().collect().map(\.id) == [pair.blairPost.id])
        #expect(try await blair.mutedUsers().collect().map(\.userID) == [ashID])
        // A single read still works, and the muted user notices nothing.
        #expect(try await blair.post(id: pair.ashPost.id).id == pair.ashPost.id)
        #expect(try await ash.like(postID: pair.blairPost.id).liked)
        #expect(try await ash.recentPosts().collect().count == 2)
        #expect(try await blair.unmute(userID: ashID) == MuteState(userID: ashID, muted: false))
        #expect(try await blair.recentPosts().collect().count == 2)
        #expect(try await blair.mutedUsers().collect().isEmpty)
    }

    @Test func blockAndMuteLists_arePaged_newestFirst() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let blair = try await server.signedIn("blair@example.com")
        var others: [Int] = []
        for name in ["ash", "carol", "dana"] { others.append(try await server.signedIn("\(name)@example.com").me().user.id) }
        for id in others {
            try await blair.block(userID: id)
            try await blair.mute(userID: id)
        }
        let blocks = blair.blockedUsers(pageSize: 2)
        #expect(try await blocks.collect().map(\.userID) == others.reversed())
        #expect(try await blocks.pages.reduce(0) { count, _ in count + 1 } == 2)
        #expect(try await blair.mutedUsers(pageSize: 1).collect().map(\.userID) == others.reversed())
    }

    @Test func reports_ofEachTarget_theOpenOneAnsweredAgain_andTheirLimits() async throws {
        let pair = try await Pair()
        defer { pair.server.stop() }
        let blair = pair.blair
        let comment = try await pair.ash.addComment("rude", to: pair.ashPost.id)
        let first = try await blair.report(.post(pair.ashPost.id), reason: .spam, details: "ads")
        #expect(first.status == .open)
        // The same target again while the first is open: the same report.
        #expect(try await blair.report(.post(pair.ashPost.id), reason: .hate).id == first.id)
        let onComment = try await blair.report(.comment(comment.id), reason: .harassment)
        let onUser = try await blair.report(.user(pair.ashPost.userID), reason: .other)
        #expect(Set([first.id, onComment.id, onUser.id]).count == 3)

        let missing = await #expect(throws: PostsAPIError.self) { try await blair.report(.post(999_999), reason: .spam) }
        #expect(missing?.code == .notFound)
        let missingComment = await #expect(throws: PostsAPIError.self) { try await blair.report(.comment(UUID()), reason: .spam) }
        #expect(missingComment?.code == .notFound)
        let tooLong = await #expect(throws: PostsAPIError.self) {
            try await blair.report(.user(pair.ashPost.userID), reason: .spam, details: String(repeating: "x", count: 1001))
        }
        #expect(tooLong?.code == .validationFailed)
        let unknownReason = await #expect(throws: PostsAPIError.self) { try await blair.report(.post(pair.ashPost.id), reason: ReportReason(rawValue: "boring")) }
        #expect(unknownReason?.status == 422)
    }
}
