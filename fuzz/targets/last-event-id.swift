// libFuzzer target: a resume position as /api/events receives it — the fuzzer's bytes as
// the value of a `Last-Event-ID` header and of a `since` query parameter, through the
// request parser, the header lookup and the query decoding, to `ChangeKey`. Whatever
// the bytes, the request is either refused by the parser (a 4xx) or its position is
// refused (400) or read as one that round-trips.
import Foundation
@testable import HTTP
@testable import PostsServer

private func position(of text: String?) {
    guard let text else { return }
    do {
        let key = try ChangeKey(text)
        guard (try? ChangeKey(key.text)) == key else { fatalError("ChangeKey \(text) does not round-trip") }
    } catch {
        if error.reason != .malformed { fatalError("ChangeKey \(text): \(error.reason), not malformed (400)") }
    }
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
public func fuzzLastEventID(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let value = Array(UnsafeBufferPointer(start: data, count: size))
    let header = Array("GET /api/events HTTP/1.1\r\nHost: t\r\nLast-Event-ID: ".utf8) + value + Array("\r\n\r\n".utf8)
    if let head = head(of: header) { position(of: head.headers["Last-Event-ID"]) }
    let query = Array("GET /api/events?since=".utf8) + value + Array(" HTTP/1.1\r\nHost: t\r\n\r\n".utf8)
    if let head = head(of: query), let raw = head.query {
        position(of: QueryParameters(parsing: raw)?["since"])
    }
    return 0
}
