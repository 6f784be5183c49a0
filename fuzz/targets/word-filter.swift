// libFuzzer target: the word filter (BLOCKED_WORDS_FILE) on any text. The fuzzer's bytes are
// read as a list file, the filter it describes is built and run over the same text, and
// then each of its first entries, put between spaces inside some of that text, must be
// found: normalisation (NFKC, case folding, invisible characters) and the cutting into
// words must treat an entry in the list and the same entry in a post alike, whatever
// surrounds it. Nothing may crash.
import Foundation
@testable import PostsServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWordFilter(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let entries = BlockedWordsFile.entries(in: text)
    let filter = WordFilter(entries: entries)
    _ = filter.matches(text)
    // Bounded, so that one long input does not normalise megabytes: the surroundings are
    // short ends of the input, and only the first entries are placed.
    let before = String(text.prefix(64)), after = String(text.suffix(64))
    for entry in entries.prefix(16) where !WordTokens.words(of: entry).isEmpty {
        let post = before + " " + entry + " " + after
        guard filter.matches(post) else {
            fatalError("entry \(entry.unicodeScalars.map { $0.value }) not found in \(post.unicodeScalars.map { $0.value })")
        }
        guard WordFilter(entries: [entry]).matches(entry) else {
            fatalError("entry \(entry.unicodeScalars.map { $0.value }) does not match itself")
        }
    }
    return 0
}
