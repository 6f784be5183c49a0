import Crypto
import Foundation

/// A browser's push subscription as `PushSubscription.toJSON()` gives it, which an app sends
/// as a `webpush` token: `{"endpoint":"https://…","keys":{"p256dh":"…","auth":"…"}}`.
/// Parsed and checked whole before it is kept (API.md "Push to every device"): the
/// endpoint an `https` URL of a push service, the key a point on P-256, the secret 16
/// bytes. Pure: it reads the text it is given and nothing else.
struct WebPushSubscription: Sendable, Equatable {
    struct Keys: Sendable, Equatable {
        /// The uncompressed point (65 bytes), checked to be on the curve. (swift-crypto's
        /// keys are not `Sendable`: one is made again for each message, which is cheap.)
        let p256dhPoint: [UInt8]
        let auth: [UInt8]

        var p256dh: P256.KeyAgreement.PublicKey {
            // Cannot fail: the point was checked when the subscription was parsed.
            try! P256.KeyAgreement.PublicKey(x963Representation: p256dhPoint)
        }
    }

    /// Why a subscription was refused, for the 422's message.
    enum Refusal: Error, Equatable, CustomStringConvertible {
        case notJSON
        case endpoint
        case p256dh
        case auth

        var description: String {
            switch self {
            case .notJSON: "a webpush token is the subscription's JSON: {\"endpoint\",\"keys\":{\"p256dh\",\"auth\"}}"
            case .endpoint: "the subscription's endpoint must be an https URL"
            case .p256dh: "keys.p256dh must be the base64url of an uncompressed P-256 public key (65 bytes)"
            case .auth: "keys.auth must be the base64url of 16 bytes"
            }
        }
    }

    /// Longest subscription text taken (real ones are a few hundred bytes).
    static let maxLength = 2048

    let endpoint: URL
    let keys: Keys

    init(json text: String) throws(Refusal) {
        guard text.utf8.count <= Self.maxLength,
              let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let keys = object["keys"] as? [String: Any] else { throw .notJSON }
        guard let address = object["endpoint"] as? String, let endpoint = URL(string: address),
              endpoint.scheme?.lowercased() == "https", let host = endpoint.host, !host.isEmpty,
              endpoint.user == nil, endpoint.password == nil else { throw .endpoint }
        guard let key = (keys["p256dh"] as? String).flatMap(Self.decode), key.count == 65, key.first == 4,
              (try? P256.KeyAgreement.PublicKey(x963Representation: key)) != nil else { throw .p256dh }
        guard let auth = (keys["auth"] as? String).flatMap(Self.decode), auth.count == 16 else { throw .auth }
        self.endpoint = endpoint
        self.keys = Keys(p256dhPoint: key, auth: auth)
    }

    /// Browsers write base64url without padding; some libraries pad it: both are taken.
    private static func decode(_ text: String) -> [UInt8]? {
        var trimmed = Substring(text)
        while trimmed.hasSuffix("=") { trimmed = trimmed.dropLast() }
        return Base64URL.decode(String(trimmed))
    }
}
