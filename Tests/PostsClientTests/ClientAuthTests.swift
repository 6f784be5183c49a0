import Foundation
import Postgres
import PostsClient
import PostsServer
import Testing
import TestSupport

/// Signing in as an app does, in token mode (production's), the code read from the outbox
/// as a mailer would; then the account, the profile, and logging out.
@Suite struct ClientAuthTests {
    private static func latestCode(for email: String, in app: Application) throws -> String {
        let body: String = try app.pool.withConnection { connection in
            try connection.query("""
                SELECT body FROM outbox WHERE recipient = \(email) ORDER BY created_at DESC, id DESC LIMIT 1
                """).first!.decode("body")
        }
        return try #require(body.firstMatch(of: /\b[0-9]{6}\b/)).output.description
    }

    @Test func codeSignIn_me_profileUpdate_logout() async throws {
        let server = try ClientTestServer.start { $0.authMode = .token }
        defer { server.stop() }
        let client = server.client()
        #expect(!client.isSignedIn)
        try await client.sendCode(to: "ash@example.com")
        let signIn = try await client.verifyCode(try Self.latestCode(for: "ash@example.com", in: server.app),
                                                 email: "ash@example.com", deviceID: "iPhone-1")
        #expect(signIn.isNewUser && signIn.email == "ash@example.com" && client.token == signIn.token)

        let me = try await client.me()
        #expect(me.user.id == signIn.userID && me.user.email == "ash@example.com")
        #expect(me.profile.username == "ash" && me.profile.avatarURL == nil)

        let updated = try await client.updateProfile(ProfileUpdate(fullName: "Ash N", bio: "hi", avatarURL: .set("https://x/a.png")))
        #expect(updated.fullName == "Ash N" && updated.bio == "hi" && updated.avatarURL == "https://x/a.png")
        let cleared = try await client.updateProfile(ProfileUpdate(avatarURL: .clear))
        #expect(cleared.avatarURL == nil && cleared.fullName == "Ash N")
        #expect(try await server.client().profile(userID: signIn.userID) == cleared)

        // A session restored from a kept token is the same user.
        let restored = server.client(token: signIn.token)
        #expect(try await restored.me().user.id == signIn.userID)

        try await client.logout()
        #expect(client.token == nil)
        let dead = await #expect(throws: PostsAPIError.self) { try await restored.me() }
        #expect(dead?.status == 401 && dead?.code == .unauthorized)
        // Token mode has no development routes.
        let mailbox = await #expect(throws: PostsAPIError.self) { try await client.developmentMailbox(for: "ash@example.com") }
        #expect(mailbox?.code == .notFound)
    }

    @Test func wrongCode_isUnauthorized_andATakenUsername_aConflict() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        _ = try await server.signedIn("blair@example.com")
        let client = server.client()
        try await client.sendCode(to: "casey@example.com")
        let code = try #require(try await client.developmentMailbox(for: "casey@example.com").first?.loginCode)
        let wrong = await #expect(throws: PostsAPIError.self) {
            try await client.verifyCode(code == "000000" ? "000001" : "000000", email: "casey@example.com")
        }
        #expect(wrong?.status == 401 && client.token == nil)
        try await client.verifyCode(code, email: "casey@example.com")
        let taken = await #expect(throws: PostsAPIError.self) { try await client.updateProfile(ProfileUpdate(username: "blair")) }
        #expect(taken?.status == 409 && taken?.code == .conflict)
        let invalid = await #expect(throws: PostsAPIError.self) { try await client.updateProfile(ProfileUpdate(username: "x")) }
        #expect(invalid?.status == 422 && invalid?.code == .validationFailed)
    }
}
