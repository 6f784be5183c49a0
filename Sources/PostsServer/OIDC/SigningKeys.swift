import Crypto
import _CryptoExtras
import Foundation

/// One of a provider's public signing keys, from its JSON Web Key Set (RFC 7517, RFC 7518
/// §6): an RSA key (`n`, `e`) verifies RS256, a P-256 key (`x`, `y`) ES256, and nothing
/// else. A key decides the algorithm: a token naming another (`none`, `HS256` with the
/// public key as a secret) is refused whatever its signature.
struct SigningKey: Sendable {
    enum Material: Sendable {
        case rsa(_RSA.Signing.PublicKey)
        /// `x || y`, checked to be a point of the curve when read (this Crypto's P-256 keys
        /// are not `Sendable`: one is made again for each verification, which is cheap).
        case p256(Data)
    }

    let id: String?
    let material: Material

    /// The one `alg` this key verifies.
    var algorithm: String {
        switch material {
        case .rsa: "RS256"
        case .p256: "ES256"
        }
    }

    /// Whether `signature` is this key's over `input` (JWS: RS256 is PKCS #1 v1.5 with
    /// SHA-256; ES256's signature is `r || s`, 64 bytes).
    func verifies(_ signature: [UInt8], over input: [UInt8]) -> Bool {
        switch material {
        case .rsa(let key):
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature),
                                        for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        case .p256(let point):
            guard signature.count == 64, let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
                  let key = try? P256.Signing.PublicKey(rawRepresentation: point) else {
                return false
            }
            return key.isValidSignature(ecdsa, for: SHA256.hash(data: input))
        }
    }
}

/// A JWKS document's keys that can sign ID tokens; the others (encryption keys, other
/// curves, symmetric keys, keys too short) are left out rather than failing the set.
enum SigningKeySet {
    struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    private struct Document: Decodable {
        let keys: [Key]
    }

    private struct Key: Decodable {
        let kty: String
        let kid: String?
        let use: String?
        let alg: String?
        let crv: String?
        let n: String?
        let e: String?
        let x: String?
        let y: String?
    }

    static func parse(_ bytes: [UInt8]) throws(Unreadable) -> [SigningKey] {
        guard let document = try? JSONDecoder().decode(Document.self, from: Data(bytes)) else {
            throw Unreadable(description: "the JWKS is not a JSON object with a \"keys\" array")
        }
        return document.keys.compactMap(signingKey)
    }

    private static func signingKey(_ key: Key) -> SigningKey? {
        guard key.use == nil || key.use == "sig" else { return nil }
        switch key.kty {
        case "RSA":
            guard key.alg == nil || key.alg == "RS256",
                  let modulus = key.n.flatMap(Base64URL.decode), let exponent = key.e.flatMap(Base64URL.decode),
                  let publicKey = try? _RSA.Signing.PublicKey(n: modulus, e: exponent),
                  publicKey.keySizeInBits >= 2048 else { return nil }
            return SigningKey(id: key.kid, material: .rsa(publicKey))
        case "EC":
            guard key.crv == "P-256", key.alg == nil || key.alg == "ES256",
                  let x = key.x.flatMap(Base64URL.decode), let y = key.y.flatMap(Base64URL.decode), x.count == 32, y.count == 32,
                  (try? P256.Signing.PublicKey(rawRepresentation: x + y)) != nil else { return nil }
            return SigningKey(id: key.kid, material: .p256(Data(x + y)))
        default:
            return nil
        }
    }
}
