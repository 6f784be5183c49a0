import Foundation
import PostsClient
import PostsServer
import Testing
import TestSupport

/// Sign in with a provider through the client, as an app does after Sign in with Apple:
/// the ID token and the raw nonce (the token carries its SHA-256, Apple's way), then the
/// identities, and the instance telling which providers it takes.
@Suite struct ClientProviderSignInTests {
    @Test func signIn_withAnIDToken_thenTheIdentities() async throws {
        let provider = try TestOpenIDProvider()
        defer { provider.stop() }
        let server = try ClientTestServer.start {
            $0.authMode = .token
            // Apple's issuer links by email by default; this loopback one stands in for it, so it is marked.
            $0.oidcProviders = [OIDCProvider(name: "apple", issuer: provider.issuer, clientIDs: ["com.example.app"], linksByEmail: true)]
        }
        defer { server.stop() }
        let client = server.client()
        #expect(try await client.instanceInfo().signIn == ["email", "apple"])
        let nonce = "raw-nonce-\(UUID().uuidString)"
        let hashed = SHA256Hex.of(nonce)
        let now = Int(Date().timeIntervalSince1970)
        let token = try provider.keys.token(["iss": provider.issuer, "sub": "001.apple", "aud": "com.example.app",
                                             "exp": now + 600, "iat": now, "nonce": hashed,
                                             "email": "relay@privaterelay.appleid.com", "email_verified": "true"])
        let signIn = try await client.signIn(provider: "apple", idToken: token, nonce: nonce, fullName: "Ash Apple")
        #expect(signIn.isNewUser && client.token == signIn.token && signIn.email == "relay@privaterelay.appleid.com")
        #expect(try await client.me().profile.fullName == "Ash Apple")
        let identities = try await client.identities()
        #expect(identities.map(\.provider) == ["apple"] && identities.first?.email == "relay@privaterelay.appleid.com")
        // The account's email is the relay's, a way in of its own: the identity may go.
        try await client.unlinkIdentity(id: try #require(identities.first?.id))
        #expect(try await client.identities().isEmpty)

        let refused = await #expect(throws: PostsAPIError.self) {
            try await server.client().signIn(provider: "apple", idToken: token, nonce: "another")
        }
        #expect(refused?.status == 401)
    }
}

/// A text's SHA-256 in lowercase hex, as Apple's nonce is.
enum SHA256Hex {
    static func of(_ text: String) -> String {
        // (CryptoKit is not a dependency of this target: the test signing keys' module does it.)
        TestSigningKeys.sha256Hex(text)
    }
}
