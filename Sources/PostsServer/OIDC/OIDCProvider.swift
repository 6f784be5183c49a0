import Foundation

/// One sign-in provider of `OIDC_PROVIDERS` (`name=issuer|client_id[|client_id…]`): Apple,
/// Google or any OpenID Connect issuer, and the app's client ids it issues tokens to.
public struct OIDCProvider: Sendable, Equatable {
    public let name: String
    /// Exactly as the tokens' `iss` says it (`https://appleid.apple.com`).
    public let issuer: String
    public let clientIDs: [String]

    public init(name: String, issuer: String, clientIDs: [String]) {
        self.name = name
        self.issuer = issuer
        self.clientIDs = clientIDs
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

    /// `OIDC_PROVIDERS`: comma-separated `name=issuer|client_id[|client_id…]`.
    static func parseList(_ text: String) throws -> [OIDCProvider] {
        var providers: [OIDCProvider] = []
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            let invalid = Configuration.Invalid(description:
                "OIDC_PROVIDERS entries are name=issuer|client_id[|client_id…] with an https issuer, not \"\(entry)\"")
            guard let equals = entry.firstIndex(of: "=") else { throw invalid }
            let name = String(entry[..<equals])
            let fields = entry[entry.index(after: equals)...].split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }),
                  fields.count >= 2, mayFetch(fields[0]), !fields.dropFirst().contains(where: \.isEmpty) else { throw invalid }
            guard !providers.contains(where: { $0.name == name }) else {
                throw Configuration.Invalid(description: "OIDC_PROVIDERS names \(name) twice")
            }
            providers.append(OIDCProvider(name: name, issuer: fields[0], clientIDs: Array(fields.dropFirst())))
        }
        return providers
    }
}
