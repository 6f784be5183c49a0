import Foundation
import PostsClient
import PostsServer
import Testing
import TestSupport

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

    /// A browser's subscription, registered with the instance's key, receives the
    /// server's Web Push (decrypted by the stand-in service, which alone holds the key).
    @Test func aWebPushSubscription_isRegistered_andReceivesPushes() async throws {
        let services = try TestPushServices()
        let environment = services.environment.filter { $0.key.hasPrefix("WEBPUSH_") || $0.key == "PUSH_CA_FILE" }
        let providers = try PushProviderSettings.parse { environment[$0] }
        let server = try ClientTestServer.start { $0.pushProviders = providers }
        defer { server.stop() }
        let instance = try await server.client().instanceInfo()
        #expect(instance.webPushPublicKey?.count == 87 && instance.supports("push"))

        let ash = try await server.signedIn("ash@example.com")
        let subscription = try #require(services.subscriptions.first.flatMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        })
        let keys = try #require(subscription["keys"] as? [String: String])
        let endpoint = try #require((subscription["endpoint"] as? String).flatMap(URL.init(string:)))
        let token = try await ash.registerWebPushSubscription(endpoint: endpoint, p256dh: keys["p256dh"]!, auth: keys["auth"]!)
        #expect(token.platform == .webpush)
        let refused = await #expect(throws: PostsAPIError.self) {
            try await ash.registerWebPushSubscription(endpoint: endpoint, p256dh: "AAAA", auth: keys["auth"]!)
        }
        #expect(refused?.status == 422)

        let blair = try await server.signedIn("blair@example.com")
        _ = try await blair.follow(userID: try await ash.me().user.id)
        let pushed = try #require(services.waitFor { $0.contains { $0.service == "webpush" && $0.status == 201 } })
        let message = try #require(pushed.first { $0.service == "webpush" && $0.status == 201 }?.payload)
        #expect((message["body"] as? String)?.hasSuffix("started following you") == true)
        #expect(try await ash.removePushToken(token.token, platform: .webpush))
    }
}
