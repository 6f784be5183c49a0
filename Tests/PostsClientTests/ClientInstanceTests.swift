import Foundation
import PostsClient
import PostsServer
import Testing

/// The instance information as an app reads it for its settings screen: before signing in,
/// with the operator's settings or without.
@Suite struct ClientInstanceTests {
    @Test func instanceInfo_readsTheOperatorsSettings() async throws {
        let parsed = try Configuration.fromEnvironment([
            "INSTANCE_NAME": "Ash's Posts", "CONTACT_EMAIL": "abuse@example.com",
            "TERMS_URL": "https://example.com/terms", "PRIVACY_URL": "https://example.com/privacy",
        ])
        let server = try ClientTestServer.start { $0.instance = parsed.instance }
        defer { server.stop() }
        let info = try await server.client().instanceInfo()
        #expect(info == InstanceInfo(name: "Ash's Posts", contactEmail: "abuse@example.com",
                                     termsURL: URL(string: "https://example.com/terms"),
                                     privacyURL: URL(string: "https://example.com/privacy"),
                                     version: ServerVersion.current, features: ["dev"]))
        #expect(info.supports("dev") && !info.supports("push"))
    }

    @Test func instanceInfo_withoutSettings_hasTheDefaultNameAndNoLinks() async throws {
        let server = try ClientTestServer.start { $0.authMode = .token }
        defer { server.stop() }
        let info = try await server.client().instanceInfo()
        #expect(info.name == "posts-server" && info.contactEmail == nil)
        #expect(info.termsURL == nil && info.privacyURL == nil)
        #expect(info.features == [] && !info.version.isEmpty)
    }

    /// A later server's features and fields decode too: an app acts on the names it knows.
    @Test func instanceInfo_decodesFeaturesAndFieldsItDoesNotKnow() throws {
        let json = #"{"status":"success","name":"P","contact_email":null,"terms_url":null,"privacy_url":null,"#
            + #""version":"9.0.0","features":["mail","s3"],"region":"eu"}"#
        let info = try JSONDecoder().decode(InstanceInfo.self, from: Data(json.utf8))
        #expect(info.features == ["mail", "s3"] && info.supports("s3") && info.version == "9.0.0")
    }
}
