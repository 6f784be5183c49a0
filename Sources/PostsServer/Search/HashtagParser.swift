/// Finds the `#tags` of a text: pure, no I/O, over the text's UTF-8 bytes, so that the
/// offsets it gives are the byte offsets API.md's tags carry (`start` at the `#`, `end`
/// after the name), as `MentionParser` does for `@names`.
///
/// The rules, exactly:
/// - A **name character** is a word character of any script (`MentionParser.isWordCharacter`:
///   a Unicode letter, combining mark or number, or `_`).
/// - A `#` starts a tag when it begins the text or follows a scalar that is neither a word
///   character nor one of `# & / .` (`C#`, `&#38;`, `site.org/#top`, `a.#b` and `##x` tag
///   nothing). White space, punctuation such as `(` or `,`, symbols and emoji may precede it.
/// - The name is the longest run of name characters after the `#` (`#a-b` is the tag `a`),
///   holding at least one letter (Unicode's Alphabetic) or `_` (`#1` is a number, not a
///   tag: as on Mastodon; so are `#²` and `#①`, which NFKC folds to digits, and a run of
///   combining marks alone, which accent folding empties), and at most `maxLength`
///   scalars: a longer run is no tag at all.
/// - At most `maxTags` per text, in order.
///
/// The name is returned as written; it is folded (NFKC, accents, case) by the database's
/// `search_fold`, the same function search uses, so that `#Café`, `#CAFE` and `#cafe` are
/// one tag and `cafe` finds them all.
struct HashtagParser: Sendable {
    struct Found: Sendable, Equatable {
        /// The UTF-8 offset of the `#`.
        let start: Int
        /// The UTF-8 offset just after the name.
        let end: Int
        /// The name as written (no `#`).
        let name: String
    }

    static let maxLength = 100
    static let maxTags = 50

    var maxTags = HashtagParser.maxTags

    func tags(in text: String) -> [Found] {
        text.utf8.withContiguousStorageIfAvailable { tags(in: $0) }
            ?? Array(text.utf8).withUnsafeBufferPointer { tags(in: $0) }
    }

    func tags(in bytes: UnsafeBufferPointer<UInt8>) -> [Found] {
        var found: [Found] = []
        var index = 0
        while index < bytes.count, found.count < maxTags {
            guard bytes[index] == UInt8(ascii: "#") else { index += 1; continue }
            let hash = index
            index += 1
            guard Self.mayPrecede(UTF8Scalars.scalar(before: hash, in: bytes)) else { continue }
            var end = hash + 1
            var scalars = 0
            var hasLetter = false
            while let (scalar, length) = UTF8Scalars.scalar(at: end, in: bytes), MentionParser.isWordCharacter(scalar) {
                if scalar == "_" || scalar.properties.isAlphabetic { hasLetter = true }
                scalars += 1
                end += length
            }
            index = end
            guard scalars > 0, scalars <= Self.maxLength, hasLetter else { continue }
            let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[(hash + 1)..<end]), as: UTF8.self)
            found.append(Found(start: hash, end: end, name: name))
        }
        return found
    }

    /// Nil: the start of the text.
    private static func mayPrecede(_ scalar: Unicode.Scalar?) -> Bool {
        guard let scalar else { return true }
        switch scalar {
        case "#", "&", "/", ".": return false
        default: return !MentionParser.isWordCharacter(scalar)
        }
    }
}
