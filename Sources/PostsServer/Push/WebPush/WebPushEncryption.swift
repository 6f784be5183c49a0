import Crypto
import Foundation

/// RFC 8291's message encryption for Web Push: a payload sealed to one browser's
/// subscription (its P-256 key `p256dh` and its 16-byte `auth` secret) as a single RFC 8188
/// `aes128gcm` record, which only that browser can open and the push service only carries.
/// Pure: the sender's one-time key and the salt are arguments (fresh for every message in
/// use; RFC 8291 Appendix A's in its test).
enum WebPushEncryption {
    enum Failure: Error, Equatable {
        /// More than one record holds (push services take 4,096 bytes of body at most).
        case tooLong(Int)
    }

    /// The record size written in the header: the whole message is one record.
    static let recordSize = 4096
    /// Salt (16), record size (4), key id length (1), the sender's public key (65).
    static let headerLength = 86
    /// The most plaintext one message carries: the body's 4,096 bytes less the header, the
    /// AES-GCM tag (16) and the last record's delimiter (1).
    static let maxPlaintext = recordSize - headerLength - 16 - 1

    /// The message body: header, then the sealed record (plaintext, delimiter 0x02, tag).
    static func encrypt(_ plaintext: [UInt8], to subscription: WebPushSubscription.Keys,
                        senderKey: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey(),
                        salt: [UInt8] = randomSalt()) throws -> [UInt8] {
        guard plaintext.count <= maxPlaintext else { throw Failure.tooLong(plaintext.count) }
        let senderPublic = [UInt8](senderKey.publicKey.x963Representation)
        let receiverPublic = subscription.p256dhPoint
        let shared = try senderKey.sharedSecretFromKeyAgreement(with: subscription.p256dh)
        // §3.3: the auth secret and both public keys bind the secret to this subscription.
        let keyInfo = Array("WebPush: info".utf8) + [0] + receiverPublic + senderPublic
        let inputKey = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: subscription.auth,
                                                      sharedInfo: keyInfo, outputByteCount: 32)
        // RFC 8188 §2.2–2.3: the content key and the nonce, from the message's salt.
        let pseudoRandomKey = HKDF<SHA256>.extract(inputKeyMaterial: inputKey, salt: salt)
        let contentKey = HKDF<SHA256>.expand(pseudoRandomKey: pseudoRandomKey,
                                             info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(pseudoRandomKey: pseudoRandomKey,
                                        info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        // One record, the last: its plaintext ends with the delimiter 0x02 and no padding.
        let sealed = try AES.GCM.seal(plaintext + [2], using: contentKey,
                                      nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Array($0) }))
        var body = salt
        body += withUnsafeBytes(of: UInt32(recordSize).bigEndian) { Array($0) }
        body.append(UInt8(senderPublic.count))
        body += senderPublic
        body += sealed.ciphertext
        body += sealed.tag
        return body
    }

    static func randomSalt() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
