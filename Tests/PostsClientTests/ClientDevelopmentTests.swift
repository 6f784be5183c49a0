import Foundation
import PostsClient
import Testing

/// The development affordances as an app's UI tests use them: a full slate, then a clean one.
@Suite struct ClientDevelopmentTests {
    @Test func seedThenReset() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let client = server.client()

        let counts = try await client.developmentSeed(users: 3, posts: 12)
        #expect(counts.users == 3 && counts.posts == 12)
        let posts = try await client.recentPosts(pageSize: 5).collect()
        #expect(posts.count == 12)
        #expect(posts.reduce(0) { $0 + $1.likeCount } == counts.likes)
        #expect(posts.reduce(0) { $0 + $1.commentCount } == counts.comments)

        try await client.developmentReset()
        #expect(try await client.recentPosts().collect().isEmpty)
        let defaults = try await client.developmentSeed()
        #expect(defaults.users == 10 && defaults.posts == 50)
    }

    @Test func outsideTrustMode_theAffordancesAreNotFound() async throws {
        let server = try ClientTestServer.start { $0.authMode = .token }
        defer { server.stop() }
        await #expect { try await server.client().developmentSeed() } throws: { error in
            (error as? PostsAPIError)?.status == 404
        }
    }
}
