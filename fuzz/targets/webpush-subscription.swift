// libFuzzer target: a `webpush` token as an app (or anyone) sends it to
// `PUT /api/me/push-tokens`, fed untrusted bytes. Whatever the bytes: no crash; a token
// that parses has an https endpoint, a point on P-256 and a 16-byte secret, a message
// sealed to it is one record of the documented length, and the endpoint's address is
// judged (public or not) without a crash; the same text as an address is judged too.
import Foundation
@testable import HTTP
@testable import PostsServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebPushSubscription(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = IPAddress(text)?.isGloballyRoutable
    guard let subscription = try? WebPushSubscription(json: text) else { return 0 }
    guard subscription.endpoint.scheme?.lowercased() == "https", subscription.keys.p256dhPoint.count == 65,
          subscription.keys.auth.count == 16 else {
        fatalError("\(text) was taken with \(subscription)")
    }
    let message = Array("{\"title\":\"t\"}".utf8)
    guard let sealed = try? WebPushEncryption.encrypt(message, to: subscription.keys),
          sealed.count == WebPushEncryption.headerLength + message.count + 1 + 16 else {
        fatalError("\(text): the message was not sealed as one record")
    }
    if let host = subscription.endpoint.host { _ = IPAddress(host)?.isGloballyRoutable }
    return 0
}
