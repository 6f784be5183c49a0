import Crypto
import _CryptoExtras
import Foundation

/// Keys made at test time, as an OpenID provider holds them, and ID tokens signed with them
/// (RS256 and ES256, and the forgeries a verifier must refuse: `alg: none`, HS256 keyed
/// with the public key). Its `jwks` is what the provider publishes.
public struct TestSigningKeys: Sendable {
    public enum Algorithm: String, Sendable {
        case rs256 = "RS256", es256 = "ES256", none, hs256 = "HS256"
    }

    public let rsa: _RSA.Signing.PrivateKey
    /// Kept raw: this Crypto's P-256 keys are not `Sendable`.
    private let ecKey: Data
    public var ec: P256.Signing.PrivateKey { try! P256.Signing.PrivateKey(rawRepresentation: ecKey) }
    public let rsaKeyID: String
    public let ecKeyID: String

    /// 2048-bit RSA and P-256, with key ids of their own.
    public init(rsaKeyID: String = "rsa-\(UUID().uuidString.prefix(8))", ecKeyID: String = "ec-\(UUID().uuidString.prefix(8))") throws {
        rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        ecKey = P256.Signing.PrivateKey().rawRepresentation
        self.rsaKeyID = rsaKeyID
        self.ecKeyID = ecKeyID
    }

    /// The JSON Web Key Set of the public halves.
    public func jwks() throws -> [UInt8] {
        let primitives = try rsa.publicKey.getKeyPrimitives()
        let point = ec.publicKey.rawRepresentation
        let keys: [[String: String]] = [
            ["kty": "RSA", "kid": rsaKeyID, "use": "sig", "alg": "RS256",
             "n": Self.base64URL(primitives.modulus), "e": Self.base64URL(primitives.publicExponent)],
            ["kty": "EC", "kid": ecKeyID, "use": "sig", "alg": "ES256", "crv": "P-256",
             "x": Self.base64URL(point.prefix(32)), "y": Self.base64URL(point.suffix(32))],
        ]
        return Array(try JSONSerialization.data(withJSONObject: ["keys": keys], options: [.sortedKeys]))
    }

    /// A signed ID token with `claims`. `keyID` defaults to the algorithm's key's (nil
    /// leaves `kid` out); HS256 is keyed with the RSA public key's DER, the classic confusion.
    public func token(_ claims: [String: Any], algorithm: Algorithm = .rs256, keyID: String?? = .none) throws -> String {
        var header: [String: String] = ["alg": algorithm.rawValue, "typ": "JWT"]
        let kid: String? = keyID ?? (algorithm == .es256 ? ecKeyID : rsaKeyID)
        if let kid { header["kid"] = kid }
        let input = Self.base64URL(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])) + "."
            + Self.base64URL(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let signature: Data
        switch algorithm {
        case .rs256: signature = try rsa.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5).rawRepresentation
        case .es256: signature = try ec.signature(for: SHA256.hash(data: Data(input.utf8))).rawRepresentation
        case .none: signature = Data()
        case .hs256:
            let secret = SymmetricKey(data: rsa.publicKey.derRepresentation)
            signature = Data(HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: secret))
        }
        return input + "." + Self.base64URL(signature)
    }

    /// A text's SHA-256 in lowercase hex (Apple's nonce in its tokens).
    public static func sha256Hex(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    public static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
