import Foundation

/// Who runs the server and what it supports (API.md "Instance information"): an app shows
/// the operator's contact and terms in its settings and report screens (App Store
/// guideline 1.2), and adapts to the server's features. No sign-in needed.
extension PostsClient {
    public func instanceInfo() async throws -> InstanceInfo {
        try await send(APIRequest("GET", "/api/instance"), as: InstanceInfo.self)
    }
}

/// The server's operator and capabilities, the same for as long as the server runs.
public struct InstanceInfo: Codable, Sendable, Equatable {
    /// What the operator calls the server; `posts-server` unless they named it.
    public let name: String
    /// Where users reach the operator, when published.
    public let contactEmail: String?
    public let termsURL: URL?
    public let privacyURL: URL?
    /// The server software's version.
    public let version: String
    /// What this server supports beyond what every server of its version does, sorted:
    /// `dev` (the development routes answer), `mail` (the server delivers sign-in mail
    /// itself), `push` (registered push tokens receive notifications), and names later
    /// servers add. Treat an unknown name as nothing to act on.
    public let features: [String]
    /// How one signs in: `email` (codes), then each provider `signIn(provider:idToken:)`
    /// takes (`apple`, `google`, as the operator named them). Empty from older servers.
    public let signIn: [String]
    /// With Web Push configured: the key a page passes to `pushManager.subscribe` as
    /// `applicationServerKey` (base64url); nil otherwise.
    public let webPushPublicKey: String?

    public init(name: String, contactEmail: String?, termsURL: URL?, privacyURL: URL?, version: String, features: [String],
                signIn: [String] = ["email"], webPushPublicKey: String? = nil) {
        self.name = name
        self.contactEmail = contactEmail
        self.termsURL = termsURL
        self.privacyURL = privacyURL
        self.version = version
        self.features = features
        self.signIn = signIn
        self.webPushPublicKey = webPushPublicKey
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        contactEmail = try container.decodeIfPresent(String.self, forKey: .contactEmail)
        termsURL = try container.decodeIfPresent(URL.self, forKey: .termsURL)
        privacyURL = try container.decodeIfPresent(URL.self, forKey: .privacyURL)
        version = try container.decode(String.self, forKey: .version)
        features = try container.decode([String].self, forKey: .features)
        signIn = try container.decodeIfPresent([String].self, forKey: .signIn) ?? []
        webPushPublicKey = try container.decodeIfPresent(String.self, forKey: .webPushPublicKey)
    }

    /// Whether the server lists `feature`.
    public func supports(_ feature: String) -> Bool { features.contains(feature) }

    enum CodingKeys: String, CodingKey {
        case name, version, features
        case signIn = "sign_in"
        case webPushPublicKey = "webpush_public_key"
        case contactEmail = "contact_email"
        case termsURL = "terms_url"
        case privacyURL = "privacy_url"
    }
}
