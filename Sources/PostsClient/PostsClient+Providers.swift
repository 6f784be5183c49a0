import Foundation

/// Sign in with Apple, Google or any OpenID Connect provider the server names in
/// `Instance.signIn` (API.md "Sign in with Apple, Google or any OpenID Connect provider"):
/// the app does the provider's sign-in (AuthenticationServices, Credential Manager) and
/// hands its ID token over.
extension PostsClient {
    /// Trades the provider's ID token for a session, which the client keeps. A first
    /// sign-in creates the user, joining the account of the token's email only when the
    /// provider verified it and the server trusts the provider with emails (Apple, Google,
    /// or one marked `+email`); another provider's verified email of an existing account is
    /// `conflict` (sign in as before, then call this again to link). Signed in already, the
    /// client links the identity to its account instead (`conflict` if it signs in to
    /// another user): sign out first to sign in as someone else. A token that fails a
    /// check is `unauthorized`, its message saying which.
    /// - Parameters:
    ///   - nonce: the raw nonce the app gave the provider (Apple: the SHA-256 of it goes in
    ///     the request; send the raw one here).
    ///   - fullName: the name to give a new user (Apple tells it only at the first sign-in).
    @discardableResult
    public func signIn(provider: String, idToken: String, nonce: String? = nil, deviceID: String? = nil,
                       fullName: String? = nil) async throws -> SignIn {
        var fields: [(String, JSONValue)] = [("provider", .string(provider)), ("id_token", .string(idToken))]
        if let nonce { fields.append(("nonce", .string(nonce))) }
        if let deviceID { fields.append(("device_id", .string(deviceID))) }
        if let fullName { fields.append(("full_name", .string(fullName))) }
        let signIn = try await send(APIRequest.json("POST", "/api/auth/oidc", fields), as: SignIn.self)
        token = signIn.token
        return signIn
    }

    /// The provider identities linked to the account, oldest first.
    public func identities() async throws -> [LinkedIdentity] {
        try await send(APIRequest("GET", "/api/me/identities"), as: IdentitiesEnvelope.self).identities
    }

    /// Unlinks one; `conflict` when it is the account's last way in.
    public func unlinkIdentity(id: Int) async throws {
        _ = try await send(APIRequest("DELETE", "/api/me/identities/\(id)"), as: SuccessEnvelope.self)
    }
}

/// A provider account linked to this one.
public struct LinkedIdentity: Codable, Sendable, Equatable, Identifiable {
    public let id: Int
    /// Its `OIDC_PROVIDERS` name; nil when the server no longer offers it.
    public let provider: String?
    public let issuer: String
    /// What the provider said when it was linked.
    public let email: String?
    public let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, provider, issuer, email
        case createdAt = "created_at"
    }
}

struct IdentitiesEnvelope: Decodable { let identities: [LinkedIdentity] }
