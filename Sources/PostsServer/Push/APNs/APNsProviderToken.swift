import Crypto
import Foundation

/// APNs' token-based authentication: an ES256 JWT (`kid` the key's id, `iss` the team,
/// `iat` when made) signed with the `.p8` auth key from Apple's developer account, sent as
/// `authorization: bearer …` on every push. Apple refuses a token older than an hour
/// (`ExpiredProviderToken`) and one renewed more often than every 20 minutes
/// (`TooManyProviderTokenUpdates`): one token is kept and renewed after `renewalAge`,
/// or at once when Apple says it expired. Times are real ones, never the dev clock's.
struct APNsProviderToken: Sendable {
    /// The auth key's private scalar (swift-crypto's keys are not `Sendable`).
    private let scalar: [UInt8]
    let keyID: String
    let teamID: String

    /// Between Apple's 20-minute floor and its hour: 40 minutes.
    static let renewalAge: TimeInterval = 40 * 60

    /// The token in use and when it was made.
    private(set) var current: (token: String, madeAt: Date)?

    init(pem: String, keyID: String, teamID: String) throws {
        scalar = [UInt8](try P256.Signing.PrivateKey(pemRepresentation: pem).rawRepresentation)
        self.keyID = keyID
        self.teamID = teamID
    }

    /// The token to send now: the kept one while it is younger than `renewalAge`, else a
    /// new one.
    mutating func token(at now: Date) throws -> String {
        if let current, now.timeIntervalSince(current.madeAt) < Self.renewalAge, now >= current.madeAt {
            return current.token
        }
        let token = try make(at: now)
        current = (token, now)
        return token
    }

    /// Apple answered `403 ExpiredProviderToken`: the next push gets a new token.
    mutating func expire() { current = nil }

    private func make(at now: Date) throws -> String {
        var header = JSONObject()
        header.add("alg", "ES256")
        header.add("kid", keyID)
        var claims = JSONObject()
        claims.add("iss", teamID)
        claims.add("iat", Int64(now.timeIntervalSince1970))
        let signingInput = Base64URL.encode(header.finished) + "." + Base64URL.encode(claims.finished)
        let key = try P256.Signing.PrivateKey(rawRepresentation: scalar)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode([UInt8](signature.rawRepresentation))
    }
}
