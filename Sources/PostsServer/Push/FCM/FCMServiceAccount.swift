import Crypto
import _CryptoExtras
import Foundation

/// `FCM_SERVICE_ACCOUNT_FILE`: the service account JSON that Firebase's console gives
/// (Project settings → Service accounts → Generate new private key), and the OAuth 2.0
/// JWT assertion (RFC 7523, RS256) that trades it at `token_uri` for an access token to
/// FCM's HTTP v1 API. Pure: reading the file and the token request are the caller's.
/// Times are real ones, never the dev clock's (Google judges them by its own).
struct FCMServiceAccount: Sendable {
    let projectID: String
    let clientEmail: String
    let tokenURI: String
    let privateKeyID: String?
    private let key: _RSA.Signing.PrivateKey

    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Google takes assertions of at most an hour.
    static let assertionLifetime: TimeInterval = 3600

    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    init(json: [UInt8]) throws(Invalid) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else {
            throw Invalid(description: "FCM_SERVICE_ACCOUNT_FILE is not JSON (Firebase's service account key file)")
        }
        func field(_ name: String) throws(Invalid) -> String {
            guard let value = object[name] as? String, !value.isEmpty else {
                throw Invalid(description: "FCM_SERVICE_ACCOUNT_FILE has no \"\(name)\" (is it a service account key file?)")
            }
            return value
        }
        if let type = object["type"] as? String, type != "service_account" {
            throw Invalid(description: "FCM_SERVICE_ACCOUNT_FILE is a \"\(type)\" file, not a service account's key")
        }
        projectID = try field("project_id")
        clientEmail = try field("client_email")
        tokenURI = try field("token_uri")
        privateKeyID = object["private_key_id"] as? String
        guard let tokenURL = URL(string: tokenURI), tokenURL.scheme?.lowercased() == "https" || tokenURL.scheme?.lowercased() == "http" else {
            throw Invalid(description: "FCM_SERVICE_ACCOUNT_FILE's token_uri is not an http(s) URL")
        }
        do {
            key = try _RSA.Signing.PrivateKey(pemRepresentation: try field("private_key"))
        } catch let error as Invalid {
            throw error
        } catch {
            throw Invalid(description: "FCM_SERVICE_ACCOUNT_FILE's private_key is not an RSA private key in PEM")
        }
    }

    /// The signed assertion for `POST token_uri` with
    /// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=…`.
    func assertion(at now: Date) throws -> String {
        var header = JSONObject()
        header.add("alg", "RS256")
        header.add("typ", "JWT")
        if let privateKeyID { header.add("kid", privateKeyID) }
        var claims = JSONObject()
        claims.add("iss", clientEmail)
        claims.add("scope", Self.scope)
        claims.add("aud", tokenURI)
        claims.add("iat", Int64(now.timeIntervalSince1970))
        claims.add("exp", Int64(now.timeIntervalSince1970 + Self.assertionLifetime))
        let signingInput = Base64URL.encode(header.finished) + "." + Base64URL.encode(claims.finished)
        let signature = try key.signature(for: SHA256.hash(data: Data(signingInput.utf8)), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Base64URL.encode([UInt8](signature.rawRepresentation))
    }

    /// `https://fcm.googleapis.com/v1/projects/<project_id>/messages:send`, or the same path
    /// on `FCM_URL` (a test server).
    func sendURL(base: String = "https://fcm.googleapis.com") -> String {
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        let project = projectID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? projectID
        return "\(trimmed)/v1/projects/\(project)/messages:send"
    }
}
