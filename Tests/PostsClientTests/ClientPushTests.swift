import Foundation
import PostsClient
import Testing

/// Push tokens as an app registers them: after sign-in, again on a later launch, and
/// removed before signing out.
@Suite struct ClientPushTests {
    @Test func registerAgain_thenRemove() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let token = try await ash.registerPushToken("a1b2c3d4", platform: .apns, deviceID: "ash-iphone")
        #expect(token.platform == .apns && token.token == "a1b2c3d4" && token.deviceID == "ash-iphone")
        let again = try await ash.registerPushToken("a1b2c3d4", platform: .apns, deviceID: "ash-iphone")
        #expect(again.createdAt >= token.createdAt)
        #expect(try await ash.removePushToken("a1b2c3d4", platform: .apns))
        #expect(try await ash.removePushToken("a1b2c3d4", platform: .apns) == false)
        let refused = await #expect(throws: PostsAPIError.self) {
            try await ash.registerPushToken("a1b2c3d4", platform: PushPlatform(rawValue: "sms"))
        }
        #expect(refused?.status == 422 && refused?.code == .validationFailed)
    }
}
