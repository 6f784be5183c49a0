// libFuzzer target: every opaque cursor a client sends back — the page cursors (posts and
// likes, comments) and the changes position (`since`, and `Last-Event-ID` on
// /api/events, which is the same text). Any text is either refused as malformed (400) or read as
// a value that writes back to text reading as the same value.
import Foundation
@testable import PostsServer

private func check<Cursor: PageCursor & Equatable>(_ type: Cursor.Type, _ text: String) {
    do {
        let cursor = try Cursor(text)
        guard (try? Cursor(cursor.text)) == cursor else { fatalError("\(Cursor.self) \(text) does not round-trip") }
    } catch {
        if error.reason != .malformed { fatalError("\(Cursor.self) \(text): \(error.reason), not malformed (400)") }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCursors(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    check(KeysetCursor.self, text)
    check(CommentCursor.self, text)
    do {
        let key = try ChangeKey(text)
        guard (try? ChangeKey(key.text)) == key else { fatalError("ChangeKey \(text) does not round-trip") }
    } catch {
        if error.reason != .malformed { fatalError("ChangeKey \(text): \(error.reason), not malformed (400)") }
    }
    return 0
}
