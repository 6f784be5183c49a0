import Crypto
import _CryptoExtras
import Foundation
@testable import PostsServer
import Testing

/// The credentials each push service takes, checked the way the service checks them: the
/// APNs provider token (ES256, kept 40 minutes, renewed at once when Apple says it
/// expired) and the FCM service account's OAuth assertion (RS256).
@Suite struct PushProviderTokenTests {
    /// A JWT's header and claims, and whether `verify` accepts its signature.
    static func parts(_ token: String) throws -> (header: [String: Any], claims: [String: Any], input: Data, signature: [UInt8]) {
        let pieces = token.split(separator: ".").map(String.init)
        try #require(pieces.count == 3)
        let headerBytes = try #require(Base64URL.decode(pieces[0]))
        let claimBytes = try #require(Base64URL.decode(pieces[1]))
        let signature = try #require(Base64URL.decode(pieces[2]))
        let header = try #require(try JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any])
        return (header, claims, Data((pieces[0] + "." + pieces[1]).utf8), signature)
    }

    @Test func theAPNsToken_isSignedForTheTeam_keptFortyMinutes_andRenewedWhenExpired() throws {
        let key = P256.Signing.PrivateKey()
        var provider = try APNsProviderToken(pem: key.pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try provider.token(at: start)
        let (header, claims, input, signature) = try Self.parts(first)
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "ABC123DEFG")
        #expect(claims["iss"] as? String == "DEF123GHIJ" && claims["iat"] as? Int == 1_800_000_000)
        #expect(key.publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: signature), for: input))

        #expect(try provider.token(at: start.addingTimeInterval(39 * 60)) == first)
        let renewed = try provider.token(at: start.addingTimeInterval(41 * 60))
        #expect(renewed != first)
        provider.expire()
        #expect(try provider.token(at: start.addingTimeInterval(42 * 60)) != renewed)
        #expect(throws: (any Error).self) { try APNsProviderToken(pem: "not a key", keyID: "k", teamID: "t") }
    }

    static func serviceAccount(_ key: _RSA.Signing.PrivateKey, dropping: String? = nil, type: String = "service_account") throws -> [UInt8] {
        var object: [String: Any] = [
            "type": type, "project_id": "posts-test", "private_key_id": "k1", "private_key": key.pemRepresentation,
            "client_email": "push@posts-test.iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token",
        ]
        if let dropping { object[dropping] = nil }
        return Array(try JSONSerialization.data(withJSONObject: object))
    }

    @Test func theFCMAssertion_isSignedByTheServiceAccount_forItsTokenURI() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let account = try FCMServiceAccount(json: try Self.serviceAccount(key))
        #expect(account.projectID == "posts-test")
        #expect(account.sendURL() == "https://fcm.googleapis.com/v1/projects/posts-test/messages:send")
        #expect(account.sendURL(base: "https://127.0.0.1:9443/") == "https://127.0.0.1:9443/v1/projects/posts-test/messages:send")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let (header, claims, input, signature) = try Self.parts(try account.assertion(at: now))
        #expect(header["alg"] as? String == "RS256" && header["kid"] as? String == "k1")
        #expect(claims["iss"] as? String == "push@posts-test.iam.gserviceaccount.com")
        #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(claims["aud"] as? String == "https://oauth2.googleapis.com/token")
        #expect(claims["iat"] as? Int == 1_800_000_000 && claims["exp"] as? Int == 1_800_003_600)
        #expect(key.publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature),
                                               for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5))
    }

    @Test func aServiceAccountFile_thatIsNotOne_isRefusedByName() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let cases: [([UInt8], String)] = [
            (Array("{".utf8), "not JSON"),
            (try Self.serviceAccount(key, dropping: "project_id"), "\"project_id\""),
            (try Self.serviceAccount(key, dropping: "private_key"), "\"private_key\""),
            (try Self.serviceAccount(key, type: "authorized_user"), "not a service account"),
        ]
        for (json, fragment) in cases {
            let error = #expect(throws: FCMServiceAccount.Invalid.self) { try FCMServiceAccount(json: json) }
            #expect(error?.description.contains(fragment) == true, "\(error?.description ?? "")")
        }
    }
}
