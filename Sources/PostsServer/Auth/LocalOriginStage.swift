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
    /// `*.localhost`, 127.0.0.0/8 or `::1`, with or without a port. On every trust-mode
    /// request, so it looks at bytes: the port comes off before an address is parsed (a
    /// colon would send `127.0.0.1:8080` down the IPv6 reader first, a tenth of a ping's
    /// time), and the name is compared without making a lowercased copy.
    static func isLocalHost(_ field: String) -> Bool {
        let utf8 = field.utf8
        let colon = UInt8(ascii: ":")
        if utf8.first == UInt8(ascii: "[") {
            guard let close = utf8.firstIndex(of: UInt8(ascii: "]")) else { return false }
            let port = field[utf8.index(after: close)...]
            return (port.isEmpty || isPort(port)) && IPAddress(field[utf8.index(after: utf8.startIndex)..<close])?.isLoopback == true
        }
        guard let firstColon = utf8.firstIndex(of: colon) else { return isLocalName(field[...]) }
        // An IPv6 literal belongs in brackets; a client that left them off means no port.
        if utf8[utf8.index(after: firstColon)...].contains(colon) { return IPAddress(field)?.isLoopback == true }
        return isPort(field[firstColon...]) && isLocalName(field[..<firstColon])
    }

    /// A loopback IPv4 address, `localhost` or a name under it (names in any case).
    private static func isLocalName(_ name: Substring) -> Bool {
        if let address = IPAddress(name) { return address.isLoopback }
        let localhost = "localhost".utf8
        let bytes = name.utf8
        guard bytes.count >= localhost.count else { return false }
        // `| 0x20` lowers an ASCII letter; only `L` and `l` become `l`, and so on.
        guard zip(bytes.suffix(localhost.count), localhost).allSatisfy({ $0 | 0x20 == $1 }) else { return false }
        return bytes.count == localhost.count
            || bytes[bytes.index(bytes.endIndex, offsetBy: -localhost.count - 1)] == UInt8(ascii: ".")
    }

    /// `:` and up to five digits (RFC 3986 allows an empty port).
    private static func isPort(_ text: Substring) -> Bool {
        let digits = text.utf8.dropFirst()
        return text.first == ":" && digits.count <= 5 && digits.allSatisfy { (48...57).contains($0) }
    }
}
