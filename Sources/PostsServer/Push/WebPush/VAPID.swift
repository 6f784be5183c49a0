import Crypto
import Foundation

/// RFC 8292 (VAPID): the application server names itself to a browser's push service with
/// a short-lived ES256 JWT for the endpoint's origin, signed with `WEBPUSH_VAPID_KEY_FILE`'s
/// P-256 key, whose public half apps pass to `pushManager.subscribe` as
/// `applicationServerKey` (and `/api/instance` shows as `webpush_public_key`).
/// The JWT's times are real ones, never the dev clock's: the push service judges them by
/// its own clock (API.md "The clock").
struct VAPID: Sendable {
    /// The private scalar (32 bytes); swift-crypto's keys are not `Sendable`.
    private let scalar: [UInt8]
    /// `WEBPUSH_SUBJECT`: a `mailto:` or `https:` contact for the push service's operator.
    let subject: String

    /// How long a token is good for: RFC 8292 allows at most 24 hours; push services
    /// refuse tokens near that limit, so 12 hours, as the common libraries do.
    static let lifetime: TimeInterval = 12 * 3600

    init(key: P256.Signing.PrivateKey, subject: String) {
        scalar = [UInt8](key.rawRepresentation)
        self.subject = subject
    }

    /// `WEBPUSH_VAPID_KEY_FILE`'s PEM (SEC 1 `EC PRIVATE KEY` or PKCS #8).
    init(pem: String, subject: String) throws {
        self.init(key: try P256.Signing.PrivateKey(pemRepresentation: pem), subject: subject)
    }

    // Cannot fail: the scalar came from a valid key.
    private var key: P256.Signing.PrivateKey { try! P256.Signing.PrivateKey(rawRepresentation: scalar) }

    /// The public key, as `applicationServerKey` takes it: base64url of the uncompressed point.
    var publicKey: String { Base64URL.encode([UInt8](key.publicKey.x963Representation)) }

    /// `Authorization` for a push to `endpoint`: `vapid t=<JWT>, k=<public key>`.
    func authorization(for endpoint: URL, at now: Date) throws -> String {
        "vapid t=\(try token(audience: Self.origin(of: endpoint), at: now)), k=\(publicKey)"
    }

    /// The JWT: `{"typ":"JWT","alg":"ES256"}`, claims `aud`, `exp`, `sub`; the signature
    /// is JWS's r‖s (64 bytes), which is swift-crypto's raw representation.
    func token(audience: String, at now: Date) throws -> String {
        let header = Base64URL.encode(Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8))
        var claims = JSONObject()
        claims.add("aud", audience)
        claims.add("exp", Int64(now.timeIntervalSince1970 + Self.lifetime))
        claims.add("sub", subject)
        let signingInput = header + "." + Base64URL.encode(claims.finished)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode([UInt8](signature.rawRepresentation))
    }

    /// `https://host[:port]`: the audience RFC 8292 §2 names, the endpoint's origin.
    static func origin(of endpoint: URL) -> String {
        let scheme = endpoint.scheme?.lowercased() ?? "https"
        let host = endpoint.host ?? ""
        let port = endpoint.port.map { ":\($0)" } ?? ""
        return "\(scheme)://\(host)\(port)"
    }
}
