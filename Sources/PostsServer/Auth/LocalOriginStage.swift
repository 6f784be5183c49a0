import Foundation
import HTTP

/// Trust mode believes whatever email a request names, so any web page open in the
/// developer's browser could post as anyone or wipe the database through `/api/dev/reset`.
/// Two guards, both from the head, so nothing of such a request is read or run:
///
/// - `Origin`: browsers say which page sent a request; one from a page not served by this
///   machine is refused (403). A form post needs no CORS preflight, so this is the guard.
/// - `Host`: a page of evil.example whose name is then made to resolve to 127.0.0.1 (DNS
///   rebinding) is same-origin with its own requests: the browser sends them, lets the page
///   read the answers, and may send no `Origin`. But it still names evil.example in `Host`.
///   So a `Host` that is not localhost, a name under it, or a loopback address is refused
///   (403) too.
///
/// Native apps and test clients send no `Origin` and address the server as 127.0.0.1 or
/// localhost: not affected. An HTTP/1.0 request without `Host` passes (HTTP/1.1 without
/// one is 400 from the parser): browsers always send one. Not used in token mode, where a
/// request needs a token a page cannot read, nor with `TRUST_ANY_HOST=1`, where the
/// operator has chosen to serve other machines.
struct LocalOriginStage: AdmissionStage {
    func admit(_ head: RequestHead, remoteAddress: String, access: Access, _ admitted: inout Admitted) throws {
        if let host = head.headers["Host"], !Self.isLocalHost(host) {
            throw APIError.forbidden("trust mode answers only requests addressed to this machine (localhost or a "
                + "loopback address), not to \(host); TRUST_ANY_HOST=1 serves every name")
        }
        if let origin = head.headers["Origin"], !Self.isLocal(origin) {
            throw APIError.forbidden("trust mode takes requests from this machine's pages only, not from \(origin)")
        }
    }

    /// `scheme://host[:port]` whose host is a loopback address, localhost or a name under
    /// it (RFC 6761: `app.localhost` is this machine too).
    static func isLocal(_ origin: String) -> Bool {
        guard let host = URLComponents(string: origin)?.host?.lowercased() else { return false }
        return Configuration.isLoopback(host) || host.hasSuffix(".localhost")
    }

    /// A `Host` field (`host[:port]`, IPv6 in brackets) naming this machine: `localhost`,
    /// `*.localhost`, 127.0.0.0/8 or `::1`, with or without a port.
    static func isLocalHost(_ field: String) -> Bool {
        let value = field.lowercased()
        let name: Substring
        let port: Substring
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return false }
            name = value[value.index(after: value.startIndex)..<close]
            port = value[value.index(after: close)...]
            return (port.isEmpty || isPort(port)) && IPAddress(name)?.isLoopback == true
        }
        // An IPv6 literal belongs in brackets; a client that left them off means no port.
        if let address = IPAddress(value) { return address.isLoopback }
        if let colon = value.firstIndex(of: ":") {
            name = value[..<colon]
            port = value[colon...]
        } else {
            name = value[...]
            port = ""
        }
        guard port.isEmpty || isPort(port) else { return false }
        return name == "localhost" || name.hasSuffix(".localhost") || IPAddress(name)?.isLoopback == true
    }

    /// `:` and up to five digits (RFC 3986 allows an empty port).
    private static func isPort(_ text: Substring) -> Bool {
        let digits = text.utf8.dropFirst()
        return text.first == ":" && digits.count <= 5 && digits.allSatisfy { (48...57).contains($0) }
    }
}
