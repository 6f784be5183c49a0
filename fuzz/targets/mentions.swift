// libFuzzer target: the mention parser on any text. Every candidate must lie inside the
// text, start at an `@` that may start a mention, name only username characters within
// the username lengths, and come in order without overlapping; the same text parsed again
// gives the same answer. Nothing may crash.
import Foundation
@testable import PostsServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMentions(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let bytes = Array(text.utf8)
    let parser = MentionParser()
    let found = parser.candidates(in: text)
    precondition(found.count <= MentionParser.maxCandidates)
    var previousEnd = 0
    for candidate in found {
        precondition(candidate.start >= previousEnd && bytes[candidate.start] == UInt8(ascii: "@"))
        precondition(!candidate.names.isEmpty && candidate.names.count <= 2)
        for name in candidate.names {
            precondition(Username.lengths.contains(name.utf8.count) && name.utf8.allSatisfy(MentionParser.isNameByte))
            let end = candidate.end(for: name)
            precondition(end <= bytes.count && Array(bytes[(candidate.start + 1)..<end]) == Array(name.utf8))
        }
        previousEnd = candidate.end(for: candidate.names[0])
    }
    precondition(parser.candidates(in: text) == found)
    return 0
}
