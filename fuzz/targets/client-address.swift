// libFuzzer target: what decides whom a request is from, fed untrusted bytes — the value of
// an `X-Forwarded-For` header (through the request parser) walked behind a trusted proxy,
// the same text as an address, a network (`TRUSTED_PROXIES` entries) and a list of them,
// and as a `Host` field under trust mode's check. Whatever the bytes: no crash, and the
// client found is the peer or an address in its canonical form, which round-trips.
import Foundation
@testable import HTTP
@testable import PostsServer

private let proxies = try! TrustedProxies(parsing: "10.0.0.0/8, 2001:db8::/32, ::1")

private func checkCanonical(_ address: IPAddress, _ input: String) {
    let text = address.description
    guard IPAddress(text) == address, IPAddress(text)?.description == text else {
        fatalError("\(input): \(text) does not round-trip")
    }
}

private func checkText(_ text: String) {
    if let address = IPAddress(text) { checkCanonical(address, text) }
    do {
        let network = try IPNetwork(parsing: text)
        guard (try? IPNetwork(parsing: network.description)) == network, network.contains(network.address) else {
            fatalError("\(text): network \(network) does not round-trip")
        }
    } catch {
        if case .hostBitsSet(let network) = error, (try? IPNetwork(parsing: network.description)) != network {
            fatalError("\(text): the network named, \(network), is refused itself")
        }
    }
    _ = try? TrustedProxies(parsing: text)
    _ = LocalOriginStage.isLocalHost(text)
}

private func head(of bytes: [UInt8]) -> RequestHead? {
    var parser = RequestParser()
    parser.feed(bytes)
    do {
        if case .head(let head) = try parser.next() { return head }
    } catch {
        if !(400..<500).contains(error.status.code) { fatalError("parser answered \(error.status.code)") }
    }
    return nil
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClientAddress(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let value = Array(UnsafeBufferPointer(start: data, count: size))
    checkText(String(decoding: value, as: UTF8.self))
    let request = Array("GET / HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: ".utf8) + value + Array("\r\n\r\n".utf8)
    guard let head = head(of: request) else { return 0 }
    let values = head.headers.values(of: "X-Forwarded-For")
    for peer in ["10.0.0.1", "::1", "192.0.2.9"] {
        let client = proxies.clientAddress(peer: peer, forwardedFor: values)
        if client == peer { continue }
        guard proxies.trusts(peer: peer), let address = IPAddress(client) else {
            fatalError("from \(peer), \(values) gave \(client)")
        }
        checkCanonical(address, client)
    }
    return 0
}
