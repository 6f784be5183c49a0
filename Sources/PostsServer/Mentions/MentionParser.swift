/// Finds the `@username`s of a text: pure, no I/O, over the text's UTF-8 bytes, so that the
/// offsets it gives are the byte offsets API.md's mentions carry (`start` at the `@`, `end`
/// after the name), whatever emoji or accented letters come before.
///
/// The rules, exactly:
/// - A **name character** is one a username may hold (`Username`): ASCII letters, digits,
///   `_` and `.`. Upper case is read too (usernames match ignoring case). Nothing else: an
///   `é` or a digit of another script ends the name.
/// - An `@` starts a mention when it begins the text or follows a scalar that is not a
///   **word character** (a Unicode letter, combining mark or number, or `_`) and is none of
///   `@ . - + /` (what joins an email's local part, an address or a URL path to the `@`:
///   `ash@example.com`, `a.b@c`, `site.org/@ash` and `@@ash` mention no one). White space,
///   punctuation such as `(` or `,`, symbols and emoji may precede it.
/// - The name is the longest run of name characters after the `@`. A run that ends with
///   dots most likely ends a sentence (`thanks @ash.`), so the candidate names are the run
///   and, when they differ, the run without its trailing dots: the longest that names
///   someone wins (a username may end with a dot).
/// - A candidate name has `Username.lengths` characters (3 to 30): a longer run is no
///   mention at all, not a mention of its first 30 characters.
/// - The scalar after the run must not be a word character or `@`: `@ashé` (a name of
///   another alphabet) and `@ash@other.social` (someone on another server) mention no one.
/// - At most `maxCandidates` per text, in order: a 20,000-character body of `@abc`s is not
///   20,000 lookups' worth of names.
struct MentionParser: Sendable {
    struct Candidate: Sendable, Equatable {
        /// The UTF-8 offset of the `@`.
        let start: Int
        /// The names to look up, longest first, as written (case kept).
        let names: [String]

        /// The end offset (exclusive) when `name`, one of `names`, is the one that exists.
        func end(for name: String) -> Int { start + 1 + name.utf8.count }
    }

    static let maxCandidates = 50

    var maxCandidates = MentionParser.maxCandidates

    func candidates(in text: String) -> [Candidate] {
        text.utf8.withContiguousStorageIfAvailable { candidates(in: $0) }
            ?? Array(text.utf8).withUnsafeBufferPointer { candidates(in: $0) }
    }

    func candidates(in bytes: UnsafeBufferPointer<UInt8>) -> [Candidate] {
        var found: [Candidate] = []
        var index = 0
        while index < bytes.count, found.count < maxCandidates {
            guard bytes[index] == UInt8(ascii: "@") else { index += 1; continue }
            let at = index
            var end = at + 1
            while end < bytes.count, Self.isNameByte(bytes[end]) { end += 1 }
            defer { index = max(end, at + 1) }
            guard Self.mayPrecede(UTF8Scalars.scalar(before: at, in: bytes)), Self.mayFollow(UTF8Scalars.scalar(at: end, in: bytes)?.0) else {
                continue
            }
            var trimmed = end
            while trimmed > at + 1, bytes[trimmed - 1] == UInt8(ascii: ".") { trimmed -= 1 }
            var names: [String] = []
            for nameEnd in trimmed == end ? [end] : [end, trimmed] where Username.lengths.contains(nameEnd - at - 1) {
                names.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[(at + 1)..<nameEnd]), as: UTF8.self))
            }
            if !names.isEmpty { found.append(Candidate(start: at, names: names)) }
        }
        return found
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."): true
        default: false
        }
    }

    /// Nil: the start of the text.
    private static func mayPrecede(_ scalar: Unicode.Scalar?) -> Bool {
        guard let scalar else { return true }
        switch scalar {
        case "@", ".", "-", "+", "/": return false
        default: return !isWordCharacter(scalar)
        }
    }

    /// Nil: the end of the text.
    private static func mayFollow(_ scalar: Unicode.Scalar?) -> Bool {
        guard let scalar else { return true }
        return scalar != "@" && !isWordCharacter(scalar)
    }

    static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == "_" { return true }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }
}
