import Foundation

/// An OpenID Connect ID token taken apart: a JSON Web Signature in compact form (RFC 7515
/// §7.1, `header.payload.signature`, each base64url) whose payload is the claims (OpenID
/// Connect Core §2). Nothing is verified here (`IDTokenVerifier` does): this only reads
/// bytes a client sent, so it is pure, bounded and total: any input is a token or a
/// `Malformed` naming what is wrong.
struct IDToken: Sendable, Equatable {
    struct Header: Sendable, Equatable {
        /// `alg`: how it claims to be signed; the key decides whether that is acceptable.
        let algorithm: String
        /// `kid`: which of the issuer's keys.
        let keyID: String?
    }

    struct Claims: Sendable, Equatable {
        /// (Once verified: the configured issuer, whichever documented spelling the token used.)
        var issuer: String
        let subject: String
        /// `aud`: one string or an array of them.
        let audiences: [String]
        /// `exp`, `iat`, `nbf`: seconds since 1970 (fractions dropped).
        let expiresAt: Int64
        let issuedAt: Int64
        let notBefore: Int64?
        let nonce: String?
        let email: String?
        /// `email_verified`: a boolean, or Apple's `"true"`/`"false"` strings.
        let emailVerified: Bool
    }

    enum Malformed: Error, Equatable, CustomStringConvertible {
        case tooLong
        case notThreeParts
        case notBase64URL(part: String)
        case notAJSONObject(part: String)
        case missing(claim: String)
        case wrongType(claim: String)

        var description: String {
            switch self {
            case .tooLong: "the ID token is longer than \(IDToken.maximumLength) bytes"
            case .notThreeParts: "the ID token is not three base64url parts separated by dots (a signed JWT)"
            case .notBase64URL(let part): "the ID token's \(part) is not base64url"
            case .notAJSONObject(let part): "the ID token's \(part) is not a JSON object"
            case .missing(let claim): "the ID token has no \(claim)"
            case .wrongType(let claim): "the ID token's \(claim) is not of its type"
            }
        }
    }

    /// Providers' tokens are one to two kilobytes; anything far past that is not one.
    static let maximumLength = 16 * 1024

    let header: Header
    let claims: Claims
    /// What the signature covers: the first two parts with their dot, as sent.
    let signingInput: [UInt8]
    let signature: [UInt8]

    init(parsing text: String) throws(Malformed) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maximumLength else { throw .tooLong }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { throw .notThreeParts }
        guard let headerBytes = Base64URL.decode(String(decoding: parts[0], as: UTF8.self)) else { throw .notBase64URL(part: "header") }
        guard let payloadBytes = Base64URL.decode(String(decoding: parts[1], as: UTF8.self)) else { throw .notBase64URL(part: "payload") }
        guard let signature = Base64URL.decode(String(decoding: parts[2], as: UTF8.self)) else { throw .notBase64URL(part: "signature") }
        let headerObject = try Self.object(headerBytes, part: "header")
        let payload = try Self.object(payloadBytes, part: "payload")
        guard case .string(let algorithm)? = headerObject["alg"] else {
            throw headerObject["alg"] == nil ? .missing(claim: "alg") : .wrongType(claim: "alg")
        }
        let keyID: String?
        switch headerObject["kid"] {
        case nil, .null?: keyID = nil
        case .string(let id)?: keyID = id
        default: throw .wrongType(claim: "kid")
        }
        header = Header(algorithm: algorithm, keyID: keyID)
        claims = try Self.claims(payload)
        signingInput = Array(bytes[0..<(parts[0].count + 1 + parts[1].count)])
        self.signature = signature
    }

    private static func object(_ bytes: [UInt8], part: String) throws(Malformed) -> [String: JSONClaim] {
        guard let object = try? JSONDecoder().decode([String: JSONClaim].self, from: Data(bytes)) else {
            throw .notAJSONObject(part: part)
        }
        return object
    }

    private static func claims(_ payload: [String: JSONClaim]) throws(Malformed) -> Claims {
        func string(_ name: String) throws(Malformed) -> String? {
            switch payload[name] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw .wrongType(claim: name)
            }
        }
        func required(_ name: String) throws(Malformed) -> String {
            guard let text = try string(name) else { throw .missing(claim: name) }
            return text
        }
        func seconds(_ name: String) throws(Malformed) -> Int64? {
            switch payload[name] {
            case nil, .null?: return nil
            case .number(let value)? where value.isFinite && abs(value) < 1e15: return Int64(value.rounded(.down))
            default: throw .wrongType(claim: name)
            }
        }
        let audiences: [String]
        switch payload["aud"] {
        case .string(let single)?: audiences = [single]
        case .array(let many)?:
            audiences = try many.map { item throws(Malformed) in
                guard case .string(let text) = item else { throw .wrongType(claim: "aud") }
                return text
            }
        case nil, .null?: throw .missing(claim: "aud")
        default: throw .wrongType(claim: "aud")
        }
        guard let expiresAt = try seconds("exp") else { throw .missing(claim: "exp") }
        guard let issuedAt = try seconds("iat") else { throw .missing(claim: "iat") }
        let verified: Bool
        switch payload["email_verified"] {
        case nil, .null?: verified = false
        case .bool(let flag)?: verified = flag
        case .string("true")?: verified = true
        case .string("false")?: verified = false
        default: throw .wrongType(claim: "email_verified")
        }
        return Claims(issuer: try required("iss"), subject: try required("sub"), audiences: audiences,
                      expiresAt: expiresAt, issuedAt: issuedAt, notBefore: try seconds("nbf"), nonce: try string("nonce"),
                      email: try string("email"), emailVerified: verified)
    }
}

/// One JSON value of a token, kept exact (`JSONSerialization` blurs booleans and numbers).
/// Objects inside are not needed and are `other`.
enum JSONClaim: Decodable, Equatable, Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([JSONClaim])
    case null
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let flag = try? container.decode(Bool.self) { self = .bool(flag) }
        else if let number = try? container.decode(Double.self) { self = .number(number) }
        else if let text = try? container.decode(String.self) { self = .string(text) }
        else if let items = try? container.decode([JSONClaim].self) { self = .array(items) }
        else { self = .other }
    }
}
