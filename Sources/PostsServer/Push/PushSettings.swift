import Foundation

/// Where new notifications are POSTed (API.md "Push"): `PUSH_WEBHOOK_URL` and
/// `PUSH_WEBHOOK_SECRET`, parsed without I/O. Its description shows neither the secret nor
/// what the URL may carry for the receiver (a user and password, a query).
public struct PushSettings: Sendable, Equatable, CustomStringConvertible {
    /// The URL as given: what libcurl posts to.
    public var url: String
    /// The key of `X-Posts-Signature`'s HMAC.
    public var secret: String
    /// `scheme://host[:port]`, for logs.
    var origin: String

    public var description: String { origin }

    /// nil when `PUSH_WEBHOOK_URL` is unset (no sender); an error naming the variable when
    /// the URL is not an http(s) URL, or when there is no secret: the receiver must be able
    /// to tell our pushes from anyone's, so an unsigned sender never starts.
    public static func parse(url: String?, secret: String?) throws(Configuration.Invalid) -> PushSettings? {
        guard let url else { return nil }
        let origin = try Self.origin(of: url)
        guard let secret else {
            throw Configuration.Invalid(description: "PUSH_WEBHOOK_SECRET is required with PUSH_WEBHOOK_URL: "
                + "the key of each push's X-Posts-Signature (HMAC-SHA256), which the receiver checks")
        }
        return PushSettings(url: url, secret: secret, origin: origin)
    }

    private static func origin(of text: String) throws(Configuration.Invalid) -> String {
        let (scheme, components) = try HTTPURLSetting.parse(text, variable: "PUSH_WEBHOOK_URL")
        guard components.fragment == nil else {
            throw HTTPURLSetting.invalid("PUSH_WEBHOOK_URL", "has a #fragment, which is never sent")
        }
        let host = components.host ?? ""
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(bracketed)" + (components.port.map { ":\($0)" } ?? "")
    }
}
