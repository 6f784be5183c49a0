import Crypto
import Foundation
@testable import PostsServer
import Testing
import TestSupport

/// ID tokens taken apart (any bytes a client sends) and verified as a bank would: each
/// forgery and each stale or misdirected token refused with its reason.
@Suite struct IDTokenTests {
    static let issuer = "https://id.example.com"
    static let now: Int64 = 1_800_000_000
    static let keys = Result { try TestSigningKeys() }

    static func claims(_ changes: [String: Any?] = [:]) -> [String: Any] {
        var claims: [String: Any] = ["iss": issuer, "sub": "user-1", "aud": "com.example.app", "exp": now + 600,
                                     "iat": now - 5, "email": "ash@example.com", "email_verified": true]
        for (name, value) in changes { claims[name] = value }
        return claims
    }

    private func verify(_ token: String, nonce: String? = nil) throws -> IDToken.Claims {
        let keys = try SigningKeySet.parse(try Self.keys.get().jwks())
        let verifier = IDTokenVerifier(issuer: Self.issuer, clientIDs: ["com.example.web", "com.example.app"])
        return try verifier.verify(try IDToken(parsing: token), keys: keys, now: Self.now, nonce: nonce)
    }

    private func refusal(_ token: String, nonce: String? = nil) throws -> IDTokenVerifier.Refusal? {
        do {
            _ = try verify(token, nonce: nonce)
            return nil
        } catch let refusal as IDTokenVerifier.Refusal {
            return refusal
        }
    }

    @Test func parsing_readsHeaderAndClaims_inTheirProvidersForms() throws {
        let keys = try Self.keys.get()
        // Apple: email_verified as a string; an audience list; fractional seconds.
        let token = try IDToken(parsing: keys.token(Self.claims(["email_verified": "true", "aud": ["a", "com.example.app"],
                                                                 "exp": 1_800_000_600.7, "nonce": "n"])))
        #expect(token.header == IDToken.Header(algorithm: "RS256", keyID: keys.rsaKeyID))
        #expect(token.claims.issuer == Self.issuer && token.claims.subject == "user-1")
        #expect(token.claims.audiences == ["a", "com.example.app"] && token.claims.expiresAt == 1_800_000_600)
        #expect(token.claims.emailVerified && token.claims.email == "ash@example.com" && token.claims.nonce == "n")
        let unverified = try IDToken(parsing: keys.token(Self.claims(["email_verified": "false"])))
        #expect(!unverified.claims.emailVerified)
    }

    @Test func parsing_refusesWhatIsNotAToken_sayingWhat() throws {
        let keys = try Self.keys.get()
        let good = try keys.token(Self.claims())
        let parts = good.split(separator: ".").map(String.init)
        let cases: [(String, IDToken.Malformed)] = [
            ("", .notThreeParts), ("a.b", .notThreeParts), ("..", .notThreeParts), (parts[0] + "." + parts[1], .notThreeParts),
            ("%%%." + parts[1] + "." + parts[2], .notBase64URL(part: "header")),
            (parts[0] + ".@@." + parts[2], .notBase64URL(part: "payload")),
            (TestSigningKeys.base64URL(Data("[1]".utf8)) + "." + parts[1] + "." + parts[2], .notAJSONObject(part: "header")),
            (String(repeating: "a", count: IDToken.maximumLength + 1), .tooLong),
            (try keys.token(Self.claims(["iss": nil])), .missing(claim: "iss")),
            (try keys.token(Self.claims(["exp": "soon"])), .wrongType(claim: "exp")),
            (try keys.token(Self.claims(["exp": true])), .wrongType(claim: "exp")),
            (try keys.token(Self.claims(["aud": [1]])), .wrongType(claim: "aud")),
            (try keys.token(Self.claims(["email_verified": "yes"])), .wrongType(claim: "email_verified")),
        ]
        for (text, expected) in cases {
            #expect(throws: expected) { try IDToken(parsing: text) }
        }
    }

    @Test func rs256AndES256_areAccepted() throws {
        let keys = try Self.keys.get()
        #expect(try verify(keys.token(Self.claims())).subject == "user-1")
        #expect(try verify(keys.token(Self.claims(), algorithm: .es256)).subject == "user-1")
        // Without a kid, the keys of its algorithm are tried.
        #expect(try verify(keys.token(Self.claims(), algorithm: .es256, keyID: .some(nil))).subject == "user-1")
        // Within the minute's leeway.
        #expect(try verify(keys.token(Self.claims(["exp": Self.now - 30, "iat": Self.now + 30, "nbf": Self.now + 30]))).subject == "user-1")
    }

    @Test func forgeries_areRefused_withTheirReason() throws {
        let keys = try Self.keys.get()
        let good = try keys.token(Self.claims())
        var parts = good.split(separator: ".").map(String.init)
        parts[1] = TestSigningKeys.base64URL(try JSONSerialization.data(withJSONObject: Self.claims(["sub": "admin"])))
        #expect(try refusal(parts.joined(separator: ".")) == .badSignature)
        #expect(try refusal(keys.token(Self.claims(), algorithm: .none)) == .algorithmNotAllowed("none"))
        #expect(try refusal(keys.token(Self.claims(), algorithm: .hs256)) == .algorithmNotAllowed("HS256"))
        // RS256 named with the EC key's id: the key decides the algorithm.
        #expect(try refusal(keys.token(Self.claims(), algorithm: .rs256, keyID: .some(keys.ecKeyID))) == .algorithmNotAllowed("RS256"))
        #expect(try refusal(keys.token(Self.claims(), keyID: .some("rotated-away"))) == .unknownKey("rotated-away"))
        // Signed by another provider's key of the same id.
        let other = try TestSigningKeys(rsaKeyID: keys.rsaKeyID, ecKeyID: keys.ecKeyID)
        #expect(try refusal(other.token(Self.claims())) == .badSignature)
    }

    @Test func staleOrMisdirectedTokens_areRefused_withTheirReason() throws {
        let keys = try Self.keys.get()
        #expect(try refusal(keys.token(Self.claims(["aud": "com.other.app"]))) == .wrongAudience)
        #expect(try refusal(keys.token(Self.claims(["iss": "https://evil.example"]))) == .wrongIssuer("https://evil.example"))
        #expect(try refusal(keys.token(Self.claims(["exp": Self.now - 61]))) == .expired)
        #expect(try refusal(keys.token(Self.claims(["iat": Self.now + 61]))) == .issuedInTheFuture)
        #expect(try refusal(keys.token(Self.claims(["nbf": Self.now + 61]))) == .notYetValid)
    }

    /// Google documents both `https://accounts.google.com` and `accounts.google.com` as its
    /// tokens' `iss`; no other issuer has its URL's bare host accepted.
    @Test func googlesBareIssuer_isAccepted_forGoogleOnly() throws {
        let keys = try Self.keys.get()
        let jwks = try SigningKeySet.parse(keys.jwks())
        let google = IDTokenVerifier(issuer: "https://accounts.google.com", clientIDs: ["com.example.app"])
        for iss in ["https://accounts.google.com", "accounts.google.com"] {
            let token = try IDToken(parsing: keys.token(Self.claims(["iss": iss])))
            // Either way the identity is keyed by the configured issuer.
            let claims = try google.verify(token, keys: jwks, now: Self.now, nonce: nil)
            #expect(claims.subject == "user-1" && claims.issuer == "https://accounts.google.com", "\(iss)")
        }
        #expect(try refusal(keys.token(Self.claims(["iss": "id.example.com"]))) == .wrongIssuer("id.example.com"))
    }

    @Test func nonce_isTheOneSent_orItsSHA256_asApplePutsIt() throws {
        let keys = try Self.keys.get()
        let raw = "b3f1c0de"
        let hashed = SHA256.hash(data: Data(raw.utf8)).map { String(format: "%02x", $0) }.joined()
        #expect(try verify(keys.token(Self.claims(["nonce": raw])), nonce: raw).subject == "user-1")
        #expect(try verify(keys.token(Self.claims(["nonce": hashed])), nonce: raw).subject == "user-1")
        #expect(try refusal(keys.token(Self.claims(["nonce": "other"])), nonce: raw) == .nonceMismatch)
        #expect(try refusal(keys.token(Self.claims(["nonce": raw]))) == .nonceMissing)
        #expect(try refusal(keys.token(Self.claims()), nonce: raw) == .nonceMissing)
    }

    @Test func keySets_keepOnlySigningKeysTheyCanUse() throws {
        let keys = try Self.keys.get()
        var document = try JSONSerialization.jsonObject(with: Data(keys.jwks())) as! [String: Any]
        var list = document["keys"] as! [[String: Any]]
        list += [["kty": "oct", "k": "c2VjcmV0"], ["kty": "RSA", "use": "enc", "n": "AQAB", "e": "AQAB"],
                 ["kty": "EC", "crv": "P-384", "x": "AA", "y": "AA"], ["kty": "RSA", "n": "AQAB", "e": "AQAB"]]
        document["keys"] = list
        let parsed = try SigningKeySet.parse(Array(try JSONSerialization.data(withJSONObject: document)))
        #expect(parsed.map(\.algorithm).sorted() == ["ES256", "RS256"])
        #expect(throws: SigningKeySet.Unreadable.self) { try SigningKeySet.parse(Array("{}".utf8)) }
    }
}
