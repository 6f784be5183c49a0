import Crypto
import _CryptoExtras
import Foundation
import HTTP

/// Signing our requests and checking other servers' the way Mastodon does (API.md
/// "Federation"): RSA with SHA-256 (PKCS #1 v1.5) over `(request-target) host date digest`,
/// a `Digest: SHA-256=<base64>` of the body, a `Date` within an hour of ours. Pure: keys,
/// bytes and times in, headers or a verdict out; fetching an actor's key is the caller's.
enum RequestSigning {
    /// What a POST we send covers (a GET: without `digest`).
    static let signedForPost = ["(request-target)", "host", "date", "digest"]
    static let signedForGet = ["(request-target)", "host", "date"]
    /// How far a signed `Date` may be from our clock, either way.
    static let dateWindowSeconds: Int64 = 3600

    enum Refusal: Error, Equatable, CustomStringConvertible {
        case signature(HTTPSignature.Refusal)
        case notCovered(String)
        case algorithm(String)
        case date(String)
        case digest(String)
        case key
        case mismatch

        var description: String {
            switch self {
            case .signature(let refusal): refusal.description
            case .notCovered(let name): "the signature must cover \(name)"
            case .algorithm(let name): "the algorithm \(name) is not supported (rsa-sha256 is)"
            case .date(let why): "the Date header \(why)"
            case .digest(let why): "the Digest header \(why)"
            case .key: "the actor's key is not an RSA public key"
            case .mismatch: "the signature does not verify with the actor's key"
            }
        }
    }

    /// `SHA-256=<base64 of the body's SHA-256>`.
    static func digest(of body: [UInt8]) -> String {
        "SHA-256=" + Data(SHA256.hash(data: body)).base64EncodedString()
    }

    /// The headers to add to a request we send (`Date`, `Digest` for a body, `Signature`),
    /// signed with the actor's private key (PEM) under `keyID`.
    static func headers(method: String, target: String, host: String, body: [UInt8]?, keyID: String, privateKeyPEM: String,
                        now: Int64) throws -> [(String, String)] {
        let date = HTTPDate.format(time_t(now))
        var headers: [(String, String)] = [("Host", host), ("Date", date)]
        if let body { headers.append(("Digest", digest(of: body))) }
        let covered = body == nil ? signedForGet : signedForPost
        let signingString = try HTTPSignature.signingString(covering: covered, method: method, target: target) { name in
            headers.filter { $0.0.lowercased() == name }.map(\.1)
        }
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        let signature = try key.signature(for: SHA256.hash(data: Data(signingString.utf8)), padding: .insecurePKCS1v1_5)
        let header = HTTPSignature(keyID: keyID, headers: covered, signature: [UInt8](signature.rawRepresentation))
        headers.append(("Signature", header.text))
        return headers.filter { $0.0 != "Host" }
    }

    /// Checks a request we received against its actor's public key (PEM): the signature
    /// covers `(request-target)`, `host` and `date` (and `digest` when there is a body), the
    /// date is within the window of `now`, the digest is the body's, and the RSA signature
    /// verifies. `value(name)` gives a header's values (name lowercase).
    static func verify(_ signature: HTTPSignature, method: String, target: String, body: [UInt8]?, publicKeyPEM: String,
                       now: Int64, value: (String) -> [String]) throws(Refusal) {
        if let algorithm = signature.algorithm, algorithm != "rsa-sha256", algorithm != "hs2019" {
            throw .algorithm(algorithm)
        }
        for name in body == nil ? signedForGet : signedForPost where !signature.headers.contains(name) {
            throw .notCovered(name)
        }
        guard let dateText = value("date").last else { throw .date("is missing") }
        guard let date = HTTPDate.seconds(parsing: dateText) else { throw .date("is not an HTTP date") }
        guard abs(date - now) <= dateWindowSeconds else { throw .date("is more than an hour from now") }
        if let body {
            let sent = value("digest").flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
            guard let sha256 = sent.first(where: { $0.lowercased().hasPrefix("sha-256=") }) else { throw .digest("has no SHA-256") }
            guard sha256.dropFirst("sha-256=".count) == digest(of: body).dropFirst("SHA-256=".count) else {
                throw .digest("is not the body's")
            }
        }
        let signingString: String
        do {
            signingString = try HTTPSignature.signingString(covering: signature.headers, method: method, target: target,
                                                            created: signature.created, expires: signature.expires, value: value)
        } catch {
            throw .signature(error)
        }
        guard let key = try? _RSA.Signing.PublicKey(pemRepresentation: publicKeyPEM) else { throw .key }
        guard key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature.signature),
                                   for: SHA256.hash(data: Data(signingString.utf8)), padding: .insecurePKCS1v1_5) else {
            throw .mismatch
        }
    }

    /// A new actor key pair: RSA 2,048 (what Mastodon makes and expects), as PEM.
    static func makeKeyPair() throws -> (privateKeyPEM: String, publicKeyPEM: String) {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        return (key.pemRepresentation, key.publicKey.pemRepresentation)
    }
}
