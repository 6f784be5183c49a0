import Crypto
import Foundation
@testable import PostsServer
import Testing

/// RFC 8291's encryption against its own worked example (Appendix A), byte for byte; the
/// subscription parser on what browsers send and on what they never do; VAPID's token
/// verified with its public key.
@Suite struct WebPushEncryptionTests {
    // RFC 8291 Appendix A.
    static let receiverPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let senderPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let plaintext = "When I grow up, I want to be a watermelon"
    static let body = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    static func subscription(endpoint: String = "https://push.example.net/send/abc", p256dh: String = receiverPublic,
                             auth: String = auth) -> String {
        #"{"endpoint":"\#(endpoint)","expirationTime":null,"keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}"#
    }

    @Test func theRFCsExample_isEncryptedByteForByte() throws {
        let keys = try WebPushSubscription(json: Self.subscription()).keys
        let scalar = try #require(Base64URL.decode(Self.senderPrivate))
        let salt = try #require(Base64URL.decode(Self.salt))
        let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: scalar)
        let body = try WebPushEncryption.encrypt(Array(Self.plaintext.utf8), to: keys, senderKey: sender, salt: salt)
        #expect(Base64URL.encode(body) == Self.body)
    }

    @Test func eachMessage_hasItsOwnKeyAndSalt_andOneRecordAtMost() throws {
        let keys = try WebPushSubscription(json: Self.subscription()).keys
        let first = try WebPushEncryption.encrypt(Array("hello".utf8), to: keys)
        let second = try WebPushEncryption.encrypt(Array("hello".utf8), to: keys)
        #expect(first != second && first.count == second.count)
        #expect(first.count == WebPushEncryption.headerLength + 5 + 1 + 16)
        let most = [UInt8](repeating: 0x61, count: WebPushEncryption.maxPlaintext)
        #expect(try WebPushEncryption.encrypt(most, to: keys).count == WebPushEncryption.recordSize)
        #expect(throws: WebPushEncryption.Failure.tooLong(most.count + 1)) {
            try WebPushEncryption.encrypt(most + [0x61], to: keys)
        }
    }

    @Test func subscriptions_areTakenAsBrowsersWriteThem_andRefusedOtherwise() throws {
        let parsed = try WebPushSubscription(json: Self.subscription())
        #expect(parsed.endpoint.host == "push.example.net" && parsed.keys.auth.count == 16)
        // Padded base64url, as some libraries write it.
        #expect(throws: Never.self) { try WebPushSubscription(json: Self.subscription(auth: Self.auth + "==")) }
        let refused: [(String, WebPushSubscription.Refusal)] = [
            ("not json", .notJSON),
            (#"{"endpoint":"https://push.example.net/x"}"#, .notJSON),
            (Self.subscription(endpoint: "http://push.example.net/x"), .endpoint),
            (Self.subscription(endpoint: "https://user:pw@push.example.net/x"), .endpoint),
            (Self.subscription(endpoint: "not a url"), .endpoint),
            (Self.subscription(p256dh: "AAAA"), .p256dh),
            // 65 bytes starting 0x04, but not a point on the curve.
            (Self.subscription(p256dh: "B" + String(repeating: "A", count: 86)), .p256dh),
            (Self.subscription(auth: "AAAA"), .auth),
            (Self.subscription(auth: "!!!"), .auth),
            (String(repeating: " ", count: WebPushSubscription.maxLength + 1), .notJSON),
        ]
        for (text, refusal) in refused {
            #expect(throws: refusal, "\(text.prefix(80))") { try WebPushSubscription(json: text) }
        }
    }

    @Test func vapidTokens_verifyWithThePublicKey_forTheEndpointsOrigin() throws {
        let vapid = VAPID(key: P256.Signing.PrivateKey(), subject: "mailto:ops@example.com")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let endpoint = try #require(URL(string: "https://push.example.net:8443/send/abc?x=1"))
        let header = try vapid.authorization(for: endpoint, at: now)
        let parts = header.split(separator: " ")
        #expect(parts.first == "vapid" && parts.count == 3)
        let token = String(parts[1].dropFirst(2).dropLast())  // "t=…,"
        let key = String(parts[2].dropFirst(2))  // "k=…"
        #expect(key == vapid.publicKey && Base64URL.decode(key)?.count == 65)
        let pieces = token.split(separator: ".").map(String.init)
        #expect(pieces.count == 3)
        let claimBytes = try #require(Base64URL.decode(pieces[1]))
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any])
        #expect(claims["aud"] as? String == "https://push.example.net:8443")
        #expect(claims["sub"] as? String == "mailto:ops@example.com")
        #expect(claims["exp"] as? Int == 1_800_000_000 + 12 * 3600)
        let point = try #require(Base64URL.decode(key))
        let signatureBytes = try #require(Base64URL.decode(pieces[2]))
        let publicKey = try P256.Signing.PublicKey(x963Representation: point)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        #expect(publicKey.isValidSignature(signature, for: Data((pieces[0] + "." + pieces[1]).utf8)))
    }
}
