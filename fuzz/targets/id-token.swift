// libFuzzer target: the ID token reader on any bytes (a sign-in request's id_token is the
// client's to choose). It must answer a token or a Malformed, never crash or hang; what it
// answers for the same text twice is the same; a token's signing input is the text's
// first two parts; and verifying whatever it read against a real key refuses it (the
// fuzzer cannot forge an RS256 or ES256 signature), whatever the claims say.
import Foundation
@testable import PostsServer

private let verifier = IDTokenVerifier(issuer: "https://id.example.com", clientIDs: ["app"])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIDToken(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let first = Result { () throws(IDToken.Malformed) in try IDToken(parsing: text) }
    let second = Result { () throws(IDToken.Malformed) in try IDToken(parsing: text) }
    switch (first, second) {
    case (.success(let token), .success(let again)):
        precondition(token == again)
        let parts = Array(text.utf8).split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        precondition(token.signingInput == Array(parts[0]) + [UInt8(ascii: ".")] + Array(parts[1]))
        // No key at all: refused before any claim counts.
        do {
            _ = try verifier.verify(token, keys: [], now: 1_800_000_000, nonce: nil)
            preconditionFailure("a token verified without a key")
        } catch {}
    case (.failure(let error), .failure(let again)):
        precondition(error == again)
    default:
        preconditionFailure("the same text read two ways")
    }
    return 0
}
