// libFuzzer target: the hashtag parser on any bytes, valid UTF-8 or not (the parser reads
// bytes and must survive any). Every tag must lie inside the text, start at a `#` that may
// start a tag, name only word characters (at least one a letter or `_`, at most 100
// scalars), and come in order without overlapping; the same bytes parsed again give the
// same answer, and a text's tags are those of its bytes. Nothing may crash.
import Foundation
@testable import PostsServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHashtags(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let raw = UnsafeBufferPointer(start: data, count: size)
    let parser = HashtagParser()
    let found = parser.tags(in: raw)
    check(found, in: raw)
    precondition(parser.tags(in: raw) == found)

    // The text as the server holds it (invalid bytes replaced) parses like its own bytes.
    let text = String(decoding: raw, as: UTF8.self)
    let bytes = Array(text.utf8)
    let fromText = parser.tags(in: text)
    bytes.withUnsafeBufferPointer { check(fromText, in: $0) }
    precondition(fromText == bytes.withUnsafeBufferPointer { parser.tags(in: $0) })
    return 0
}

private func check(_ found: [HashtagParser.Found], in bytes: UnsafeBufferPointer<UInt8>) {
    precondition(found.count <= HashtagParser.maxTags)
    var previousEnd = 0
    for tag in found {
        precondition(tag.start >= previousEnd && tag.end <= bytes.count && bytes[tag.start] == UInt8(ascii: "#"))
        precondition(Array(bytes[(tag.start + 1)..<tag.end]) == Array(tag.name.utf8))
        let scalars = tag.name.unicodeScalars
        precondition(!scalars.isEmpty && scalars.count <= HashtagParser.maxLength)
        precondition(scalars.allSatisfy(MentionParser.isWordCharacter))
        precondition(scalars.contains { $0 == "_" || $0.properties.isAlphabetic })
        previousEnd = tag.end
    }
}
