import Foundation
import HTTP
@testable import PostsServer
import Testing

/// draft-cavage HTTP Signatures as Mastodon uses them: the header read and written, the
/// signing string, and signatures made and checked (a body, a target, a date or a key not
/// the signed one is refused, each with its reason).
@Suite struct HTTPSignatureTests {
    static let mastodonHeader = #"keyId="https://mastodon.example/users/alice#main-key",algorithm="rsa-sha256","#
        + #"headers="(request-target) host date digest content-type",signature="c2lnbmF0dXJl""#

    @Test func aMastodonHeader_isRead_andWrittenBackTheSame() throws {
        let signature = try HTTPSignature(parsing: Self.mastodonHeader)
        #expect(signature.keyID == "https://mastodon.example/users/alice#main-key")
        #expect(signature.algorithm == "rsa-sha256")
        #expect(signature.headers == ["(request-target)", "host", "date", "digest", "content-type"])
        #expect(signature.signature == Array("signature".utf8))
        #expect(try HTTPSignature(parsing: signature.text) == signature)
        // Spaces after commas, unknown parameters, numbers bare, no headers (the draft's `date`).
        let spaced = try HTTPSignature(parsing: #"keyId="k", created=1402170695, extra="x", signature="c2ln""#)
        #expect(spaced.headers == ["date"] && spaced.created == 1_402_170_695 && spaced.algorithm == nil)
    }

    @Test func malformedHeaders_areRefused() {
        let cases = [
            #"algorithm="rsa-sha256",signature="c2ln""#, #"keyId="k",signature="not base64!""#, #"keyId="k""#,
            #"keyId="k",keyId="j",signature="c2ln""#, #"keyId="k,signature="c2ln""#, #"keyId="k" signature="c2ln""#,
            #"keyId="k",created=soon,signature="c2ln""#, "", "=", String(repeating: "a", count: 9000),
            // A bare value with a quote in it (found by the fuzzer: it printed back as another header).
            #"keyId=="rsb-sha256*,headers="(request-target) host date digest",signature="QUJD""#,
        ]
        for text in cases {
            #expect(throws: HTTPSignature.Refusal.self, "\(text.prefix(60))") { try HTTPSignature(parsing: text) }
        }
    }

    @Test func theSigningString_isTheCoveredPartsInOrder() throws {
        let headers = ["host": ["example.com"], "date": ["Sun, 05 Jan 2014 21:31:40 GMT"], "x-list": ["a ", " b"]]
        let text = try HTTPSignature.signingString(covering: ["(request-target)", "host", "date", "x-list"], method: "POST",
                                                   target: "/foo?param=value&pet=dog") { headers[$0] ?? [] }
        #expect(text == "(request-target): post /foo?param=value&pet=dog\nhost: example.com\ndate: Sun, 05 Jan 2014 21:31:40 GMT\nx-list: a, b")
        #expect(throws: HTTPSignature.Refusal.missingHeader("digest")) {
            try HTTPSignature.signingString(covering: ["digest"], method: "GET", target: "/") { headers[$0] ?? [] }
        }
    }

    @Test func aSignedPost_verifies_andEveryChangeIsRefused() throws {
        let keys = try RequestSigning.makeKeyPair()
        let now: Int64 = 1_800_000_000
        let body = Array(#"{"type":"Follow"}"#.utf8)
        let sent = try RequestSigning.headers(method: "POST", target: "/users/bob/inbox", host: "posts.example", body: body,
                                              keyID: "https://posts.example/users/alice#main-key",
                                              privateKeyPEM: keys.privateKeyPEM, now: now)
        var headers = Dictionary(uniqueKeysWithValues: sent.map { ($0.0.lowercased(), [$0.1]) })
        headers["host"] = ["posts.example"]
        #expect(headers["date"] == [HTTPDate.format(time_t(now))])
        #expect(headers["digest"]?.first?.hasPrefix("SHA-256=") == true)
        let signature = try HTTPSignature(parsing: try #require(headers["signature"]?.first))
        #expect(signature.headers == RequestSigning.signedForPost && signature.algorithm == "rsa-sha256")

        func verify(target: String = "/users/bob/inbox", body: [UInt8] = body, key: String = keys.publicKeyPEM,
                    now: Int64 = now, headers: [String: [String]] = headers) throws(RequestSigning.Refusal) {
            try RequestSigning.verify(signature, method: "POST", target: target, body: body, publicKeyPEM: key, now: now) {
                headers[$0] ?? []
            }
        }
        try verify()
        try verify(now: now + 3500)
        #expect(throws: RequestSigning.Refusal.mismatch) { try verify(target: "/users/carol/inbox") }
        #expect(throws: RequestSigning.Refusal.digest("is not the body's")) { try verify(body: Array(#"{"type":"Like"}"#.utf8)) }
        #expect(throws: RequestSigning.Refusal.date("is more than an hour from now")) { try verify(now: now + 3700) }
        #expect(throws: RequestSigning.Refusal.mismatch) { try verify(key: try RequestSigning.makeKeyPair().publicKeyPEM) }
        #expect(throws: RequestSigning.Refusal.key) { try verify(key: "not a key") }
        var forgedDigest = headers
        forgedDigest["digest"] = [RequestSigning.digest(of: Array("other".utf8))]
        #expect(throws: RequestSigning.Refusal.mismatch) {
            try verify(body: Array("other".utf8), headers: forgedDigest)
        }
        // A signature that leaves the digest out cannot vouch for a body.
        var partial = signature
        partial.headers = ["(request-target)", "host", "date"]
        #expect(throws: RequestSigning.Refusal.notCovered("digest")) {
            try RequestSigning.verify(partial, method: "POST", target: "/users/bob/inbox", body: body,
                                      publicKeyPEM: keys.publicKeyPEM, now: now) { headers[$0] ?? [] }
        }
    }

    @Test func httpDates_areReadStrictly() {
        #expect(HTTPDate.seconds(parsing: "Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.seconds(parsing: "Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(HTTPDate.seconds(parsing: "Thu, 29 Feb 2024 12:00:00 GMT") == 1_709_208_000)
        for seconds in [0, 784_111_777, 1_709_208_000, 1_800_000_000, 4_102_444_799] as [Int64] {
            #expect(HTTPDate.seconds(parsing: HTTPDate.format(time_t(seconds))) == seconds)
        }
        for text in ["Mon, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
                     "Wed, 29 Feb 2023 12:00:00 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 UTC",
                     "Sun, 06 Foo 1994 08:49:37 GMT", "Sun,  6 Nov 1994 08:49:37 GMT", ""] {
            #expect(HTTPDate.seconds(parsing: text) == nil, "\(text)")
        }
    }
}
