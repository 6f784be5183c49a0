import Foundation

/// One sign-in provider of `OIDC_PROVIDERS` (`name[+email]=issuer|client_id[|client_id…]`):
/// Apple, Google or any OpenID Connect issuer, and the app's client ids it issues tokens to.
public struct OIDCProvider: Sendable, Equatable {
    public let name: String
    /// Exactly as the tokens' `iss` says it (`https://appleid.apple.com`).
    public let issuer: String
    public let clientIDs: [String]
    /// Whether the provider's `email_verified` is believed: a first sign-in then joins the
    /// account of that email, or makes one with it. Only as safe as the provider's checks
    /// of the addresses it vouches for: one that verifies loosely would hand whoever it
    /// vouches for the address's account here (and every account is as safe as the least
    /// careful provider trusted). So Apple and Google by default, others when marked.
    public let linksByEmail: Bool

    /// The issuers whose verified emails are believed without a mark: Apple's (its private
    /// relay addresses included) and Google's.
    public static let emailTrustedIssuers: Set<String> = ["https://appleid.apple.com", "https://accounts.google.com"]

    /// The mark after a name in `OIDC_PROVIDERS` that makes its provider link by email. On
    /// the name, which is letters, digits, `-` and `_` only, it cannot be read as a client id.
    static let linksByEmailMark = "+email"

    public init(name: String, issuer: String, clientIDs: [String], linksByEmail: Bool = false) {
        self.name = name
        self.issuer = issuer
        self.clientIDs = clientIDs
        self.linksByEmail = linksByEmail || Self.emailTrustedIssuers.contains(issuer)
    }

    /// The discovery document (OpenID Connect Discovery §4).
    var discoveryURL: String {
        (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/openid-configuration"
    }

    /// Whether `url` may be fetched for this provider: https, or http to a loopback address
    /// (a provider on this machine, in development and tests).
    static func mayFetch(_ url: String) -> Bool {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else { return false }
        switch components.scheme?.lowercased() {
        case "https": return true
        case "http": return Configuration.isLoopback(host)
        default: return false
        }
    }

    /// `OIDC_PROVIDERS`: comma-separated `name[+email]=issuer|client_id[|client_id…]`.
    static func parseList(_ text: String) throws -> [OIDCProvider] {
        var providers: [OIDCProvider] = []
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            let invalid = Configuration.Invalid(description:
                "OIDC_PROVIDERS entries are name[+email]=issuer|client_id[|client_id…] with an https issuer, not \"\(entry)\"")
            guard let equals = entry.firstIndex(of: "=") else { throw invalid }
            let label = String(entry[..<equals])
            let marked = label.hasSuffix(linksByEmailMark)
            let name = marked ? String(label.dropLast(linksByEmailMark.count)) : label
            guard !name.contains("+") else {
                throw Configuration.Invalid(description: """
                    OIDC_PROVIDERS: the only mark after a name is +email (the provider's verified emails link accounts), \
                    not "\(label)"
                    """)
            }
            let fields = entry[entry.index(after: equals)...].split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            // A mark put after the issuer or a client id would otherwise pass for part of it.
            guard !fields.contains(where: { $0.hasSuffix(linksByEmailMark) }) else {
                throw Configuration.Invalid(description: "OIDC_PROVIDERS: +email goes after the name (\(name)+email=…), in \"\(entry)\"")
            }
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }),
                  fields.count >= 2, mayFetch(fields[0]), !fields.dropFirst().contains(where: \.isEmpty) else { throw invalid }
            guard !providers.contains(where: { $0.name == name }) else {
                throw Configuration.Invalid(description: "OIDC_PROVIDERS names \(name) twice")
            }
            providers.append(OIDCProvider(name: name, issuer: fields[0], clientIDs: Array(fields.dropFirst()), linksByEmail: marked))
        }
        return providers
    }
}
