import Foundation

/// An operator's setting that must be an absolute http(s) URL (`PUSH_WEBHOOK_URL`,
/// `TERMS_URL`, `PRIVACY_URL`), checked at start without I/O.
enum HTTPURLSetting {
    /// The URL's parts and its lowercased scheme; otherwise an error naming `variable` and
    /// saying why. The value itself is not repeated: it may hold a password or a key.
    static func parse(_ text: String, variable: String) throws(Configuration.Invalid) -> (scheme: String, parts: URLComponents) {
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || !$0.isASCII }) else {
            throw invalid(variable, "has spaces, control or non-ASCII characters (percent-encode them)")
        }
        guard let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased() else {
            throw invalid(variable, "is not a URL")
        }
        guard scheme == "http" || scheme == "https" else { throw invalid(variable, "must start with http:// or https://") }
        // `http:/host` parses with a path and no host; `http:///path` with an empty host.
        guard let host = parts.host, !host.isEmpty, text.lowercased().hasPrefix(scheme + "://") else {
            throw invalid(variable, "has no host")
        }
        return (scheme, parts)
    }

    static func invalid(_ variable: String, _ why: String) -> Configuration.Invalid {
        Configuration.Invalid(description: "\(variable) \(why); expected http://host[:port]/path or https://…")
    }
}
