import Crypto
import Foundation

/// Checks an ID token as OpenID Connect Core §3.1.3.7 asks, for one provider: the signature
/// with the issuer's key the token names (its algorithm the key's own), then `iss`, `aud`
/// among the app's client ids, `exp`, `iat` and `nbf` with a minute's leeway, and the
/// `nonce`. The first check that fails is the refusal, which says which it was (401).
struct IDTokenVerifier: Sendable {
    enum Refusal: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        case unknownKey(String?)
        case algorithmNotAllowed(String)
        case badSignature
        case wrongIssuer(String)
        case wrongAudience
        case expired
        case issuedInTheFuture
        case notYetValid
        case nonceMissing
        case nonceMismatch

        var description: String {
            switch self {
            case .malformed(let what): what
            case .unknownKey(let id): "the ID token is signed with a key the provider does not publish (kid \(id ?? "none"))"
            case .algorithmNotAllowed(let algorithm): "the ID token's alg \(algorithm) is not its key's (RS256 or ES256)"
            case .badSignature: "the ID token's signature does not verify"
            case .wrongIssuer(let issuer): "the ID token was issued by \(issuer), not by this provider"
            case .wrongAudience: "the ID token is not for this app (aud is none of its client ids)"
            case .expired: "the ID token has expired (exp)"
            case .issuedInTheFuture: "the ID token is issued in the future (iat)"
            case .notYetValid: "the ID token is not valid yet (nbf)"
            case .nonceMissing: "the ID token and the request must both carry the nonce, or neither"
            case .nonceMismatch: "the ID token's nonce is not the one sent (nor its SHA-256)"
            }
        }
    }

    /// Seconds of clock difference forgiven between the provider and this server.
    static let leeway: Int64 = 60

    let issuer: String
    let clientIDs: [String]

    /// Other spellings of an issuer's `iss` that the provider documents as its own: Google
    /// signs tokens with `accounts.google.com` as well as its issuer URL.
    static let documentedAliases = ["https://accounts.google.com": ["accounts.google.com"]]

    /// The token's claims once every check passed. `nonce`: the raw nonce the app sent
    /// with its sign-in (Apple puts its SHA-256 hex in the token, Google the nonce itself).
    func verify(_ token: IDToken, keys: [SigningKey], now: Int64, nonce: String?) throws(Refusal) -> IDToken.Claims {
        guard token.header.algorithm == "RS256" || token.header.algorithm == "ES256" else {
            throw .algorithmNotAllowed(token.header.algorithm)
        }
        let candidates = keys.filter { token.header.keyID == nil || $0.id == token.header.keyID }
        guard !candidates.isEmpty else { throw .unknownKey(token.header.keyID) }
        let fitting = candidates.filter { $0.algorithm == token.header.algorithm }
        guard !fitting.isEmpty else { throw .algorithmNotAllowed(token.header.algorithm) }
        guard fitting.contains(where: { $0.verifies(token.signature, over: token.signingInput) }) else { throw .badSignature }
        var claims = token.claims
        guard claims.issuer == issuer || Self.documentedAliases[issuer]?.contains(claims.issuer) == true else {
            throw .wrongIssuer(claims.issuer)
        }
        // One identity per (issuer, sub) whichever spelling signed it in.
        claims.issuer = issuer
        guard claims.audiences.contains(where: clientIDs.contains) else { throw .wrongAudience }
        guard claims.expiresAt > now - Self.leeway else { throw .expired }
        guard claims.issuedAt <= now + Self.leeway else { throw .issuedInTheFuture }
        if let notBefore = claims.notBefore, notBefore > now + Self.leeway { throw .notYetValid }
        switch (nonce, claims.nonce) {
        case (nil, nil): break
        case (let sent?, let inToken?):
            let hashed = SHA256.hash(data: Array(sent.utf8)).map { String(format: "%02x", $0) }.joined()
            guard inToken == sent || inToken == hashed else { throw .nonceMismatch }
        default: throw .nonceMissing
        }
        return claims
    }
}
