import Foundation

/// The `Signature` header of draft-cavage-http-signatures (version 12), as Mastodon and the
/// rest of the fediverse sign their requests:
/// `keyId="https://host/users/alice#main-key",algorithm="rsa-sha256",
/// headers="(request-target) host date digest",signature="<base64>"`. Pure: the header's
/// text in, its parameters out (and back), and the signing string built from a request's
/// parts. Which key verifies it, and whether the date is fresh, are the caller's.
struct HTTPSignature: Sendable, Equatable {
    /// Why a header was refused (a 401 says so).
    enum Refusal: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        case missingHeader(String)

        var description: String {
            switch self {
            case .malformed(let why): "the Signature header is malformed: \(why)"
            case .missingHeader(let name): "the signature covers \(name), which the request does not have"
            }
        }
    }

    /// Where the key is: an actor's key id, a URL.
    var keyID: String
    /// `rsa-sha256` (Mastodon's), or `hs2019` (the key decides: RSA here); nil when absent.
    var algorithm: String?
    /// The signed parts in order, lowercased: `(request-target)`, `(created)`, `(expires)`
    /// or header names. The draft's default, when absent, is `date` alone.
    var headers: [String]
    var signature: [UInt8]
    /// `(created)` and `(expires)` parameters, seconds since 1970 (hs2019).
    var created: Int64?
    var expires: Int64?

    /// Longest header taken: a key id and a 4,096-bit signature are well under it.
    static let maxLength = 8192

    init(keyID: String, algorithm: String? = "rsa-sha256", headers: [String], signature: [UInt8]) {
        self.keyID = keyID
        self.algorithm = algorithm
        self.headers = headers
        self.signature = signature
    }

    /// The header's value parsed: comma-separated `name="value"` parameters (numbers bare).
    /// Unknown parameters are ignored, as the draft asks; a repeated one is refused.
    init(parsing text: String) throws(Refusal) {
        guard text.utf8.count <= Self.maxLength else { throw .malformed("longer than \(Self.maxLength) bytes") }
        var parameters: [String: String] = [:]
        var rest = Substring(text)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" }
            guard let equals = rest.firstIndex(of: "=") else { throw .malformed("a parameter without a value") }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0 == "-" }) else { throw .malformed("a parameter's name") }
            rest = rest[rest.index(after: equals)...]
            let value: String
            if rest.first == "\"" {
                rest = rest.dropFirst()
                guard let close = rest.firstIndex(of: "\"") else { throw .malformed("an unterminated quoted value") }
                value = String(rest[..<close])
                rest = rest[rest.index(after: close)...]
            } else {
                // A bare value (the draft's numbers): a token, never a quote or a space.
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                guard value.unicodeScalars.allSatisfy(Self.isBareValueScalar) else { throw .malformed("\(name)'s value must be quoted") }
                rest = rest[end...]
            }
            guard parameters.updateValue(value, forKey: name) == nil else { throw .malformed("\(name) appears twice") }
            rest = rest.drop { $0 == " " || $0 == "\t" }
            if rest.isEmpty { break }
            guard rest.first == "," else { throw .malformed("parameters must be separated by commas") }
            rest = rest.dropFirst()
        }
        guard let keyID = parameters["keyid"], !keyID.isEmpty else { throw .malformed("no keyId") }
        guard let encoded = parameters["signature"], let signature = Data(base64Encoded: encoded).map(Array.init), !signature.isEmpty else {
            throw .malformed("no signature, or one that is not base64")
        }
        let headers = (parameters["headers"] ?? "date").lowercased().split(separator: " ").map(String.init)
        guard !headers.isEmpty else { throw .malformed("headers is empty") }
        self.keyID = keyID
        algorithm = parameters["algorithm"]?.lowercased()
        self.headers = headers
        self.signature = signature
        created = try parameters["created"].map { text throws(Refusal) in
            guard let value = Int64(text) else { throw .malformed("created is not a number") }
            return value
        }
        expires = try parameters["expires"].map { text throws(Refusal) in
            guard let value = Int64(text) else { throw .malformed("expires is not a number") }
            return value
        }
    }

    private static func isBareValueScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "._~+/=-".unicodeScalars.contains(scalar))
    }

    /// The header's value, as Mastodon writes it.
    var text: String {
        var parts = ["keyId=\"\(keyID)\""]
        if let algorithm { parts.append("algorithm=\"\(algorithm)\"") }
        parts.append("headers=\"\(headers.joined(separator: " "))\"")
        parts.append("signature=\"\(Data(signature).base64EncodedString())\"")
        return parts.joined(separator: ",")
    }

    /// The string signed (§2.3): one line per covered part, `name: value`, joined by `\n`.
    /// `(request-target)` is the method lowercased and the path with its query; a header
    /// sent more than once is its values joined by `, `. `value(name)` gives a header's
    /// values (its name lowercase), none when absent.
    static func signingString(covering headers: [String], method: String, target: String, created: Int64? = nil,
                              expires: Int64? = nil, value: (String) -> [String]) throws(Refusal) -> String {
        var lines: [String] = []
        for name in headers {
            switch name {
            case "(request-target)":
                lines.append("(request-target): \(method.lowercased()) \(target)")
            case "(created)":
                guard let created else { throw .missingHeader(name) }
                lines.append("(created): \(created)")
            case "(expires)":
                guard let expires else { throw .missingHeader(name) }
                lines.append("(expires): \(expires)")
            default:
                let values = value(name)
                guard !values.isEmpty else { throw .missingHeader(name) }
                lines.append("\(name): " + values.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
            }
        }
        return lines.joined(separator: "\n")
    }
}
