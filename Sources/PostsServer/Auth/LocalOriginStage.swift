import Foundation
import HTTP

/// Trust mode believes whatever email a request names, so any web page open in the
/// developer's browser could post as anyone or wipe the database through `/api/dev/reset`
/// (a form post needs no CORS preflight). Browsers say which page sent a request in
/// `Origin`: one from a page not served by this machine is refused (403). Native apps and
/// test clients send no `Origin` and are not affected. Not used in token mode, where a
/// request needs a token a page cannot read, nor with `TRUST_ANY_HOST=1`, where the
/// operator has chosen to serve other machines.
struct LocalOriginStage: AdmissionStage {
    func admit(_ head: RequestHead, remoteAddress: String, access: Access, _ admitted: inout Admitted) throws {
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
}
