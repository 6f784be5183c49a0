import Foundation

/// API.md "Federation": `FEDERATION=on` with `PUBLIC_URL`, the instance's own origin, and
/// `FEDERATION_ALLOW_PRIVATE=1` for tests (fetches and deliveries may reach loopback and
/// private addresses, over `http://` too). Parsed at start without I/O.
public struct FederationSettings: Sendable, Equatable {
    /// `https://host[:port]`, without a trailing slash: every id we publish starts with it.
    public let origin: String
    /// The host, with its port when not the scheme's default: `@user@<domain>`.
    public let domain: String
    public let allowPrivate: Bool

    /// nil unless `FEDERATION=on`; an error naming the variable for anything malformed.
    public static func parse(federation: String?, publicURL: String?, allowPrivate: String?) throws(Configuration.Invalid) -> FederationSettings? {
        switch federation?.lowercased() {
        case nil, "off": return nil
        case "on": break
        case let other?: throw Configuration.Invalid(description: "FEDERATION must be on or off, not \"\(other)\"")
        }
        let allow = allowPrivate == "1"
        guard let publicURL else {
            throw Configuration.Invalid(description: "FEDERATION=on needs PUBLIC_URL, the instance's https:// origin (like https://social.example)")
        }
        let (scheme, parts) = try HTTPURLSetting.parse(publicURL, variable: "PUBLIC_URL")
        guard scheme == "https" || allow else {
            throw HTTPURLSetting.invalid("PUBLIC_URL", "must be https:// (http:// only with FEDERATION_ALLOW_PRIVATE=1)")
        }
        guard parts.path.isEmpty || parts.path == "/", parts.query == nil, parts.fragment == nil, parts.user == nil else {
            throw HTTPURLSetting.invalid("PUBLIC_URL", "must be an origin alone, with no path, query or user")
        }
        let host = (parts.host ?? "").lowercased()
        let defaultPort = scheme == "https" ? 443 : 80
        let domain = parts.port.map { $0 == defaultPort ? host : "\(host):\($0)" } ?? host
        return FederationSettings(origin: "\(scheme)://\(domain)", domain: domain, allowPrivate: allow)
    }

    init(origin: String, domain: String, allowPrivate: Bool) {
        self.origin = origin
        self.domain = domain
        self.allowPrivate = allowPrivate
    }

    /// The schemes our own fetches and deliveries may use.
    var protocols: String { allowPrivate ? "http,https" : "https" }
}
