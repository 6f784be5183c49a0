// libFuzzer target: what another server of the fediverse sends (API.md "Federation"), fed
// untrusted bytes: a `Signature` header, an actor document, a Note's HTML. Whatever the
// bytes: no crash; a parsed signature prints back to a header that parses to the same; an
// actor that is taken has an http(s) id on the host it came from, an inbox and a key of its
// own; plain text from HTML holds no tag and stays within its bound; the signing string of
// a parsed signature is made (or refused) without a crash.
import Foundation
@testable import HTTP
@testable import PostsServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzActivityPub(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let signature = try? HTTPSignature(parsing: text) {
        guard let again = try? HTTPSignature(parsing: signature.text), again == signature else {
            fatalError("\(text): its header \(signature.text) does not parse back to it")
        }
        _ = try? HTTPSignature.signingString(covering: signature.headers, method: "post", target: "/inbox",
                                             created: signature.created, expires: signature.expires) { [$0] }
    }
    let plain = NoteContent.plainText(fromHTML: text, limit: 500)
    guard plain.count <= 500 else { fatalError("\(text): plain text past its bound") }
    if let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
       let actor = try? RemoteActorDocument(json: object, fetchedFrom: "https://remote.example/users/x") {
        guard actor.domain == "remote.example", RemoteActorDocument.domain(of: actor.inbox) != nil, !actor.publicKeyPEM.isEmpty else {
            fatalError("\(text) was taken as \(actor)")
        }
    }
    return 0
}
