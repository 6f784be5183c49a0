import Foundation

/// The words the word filter compares, from a list entry or from a client's text alike:
/// the text is normalised once (NFKC, case folding, default-ignorable code points removed:
/// Unicode's NFKC_Casefold, near enough), then cut into runs of letters, marks and digits.
/// Both sides going through this one function is what makes `ＢＡＤ`, `Bad` and `bad` the
/// same word, and `ﬁne` the word `fine`.
enum WordTokens {
    /// `text` as the filter sees it. Most texts are ASCII, where NFKC changes nothing and case
    /// folding is lowercasing: they skip Foundation's normalisation (measured at about 0.1 µs
    /// a character, which a 20,000-character body would pay on every write).
    static func normalized(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        // Folding, not lowercasing: `ẞ` and `ß` become `ss`, final `ς` becomes `σ`.
        let folded = text.precomposedStringWithCompatibilityMapping.folding(options: .caseInsensitive, locale: nil)
        // A zero-width space or a soft hyphen inside a word would otherwise cut it in two
        // (`ba\u{200B}d`): NFKC_Casefold drops them, and so do we.
        guard folded.unicodeScalars.contains(where: \.properties.isDefaultIgnorableCodePoint) else { return folded }
        var kept = String.UnicodeScalarView()
        kept.append(contentsOf: folded.unicodeScalars.lazy.filter { !$0.properties.isDefaultIgnorableCodePoint })
        return String(kept)
    }

    /// Calls `body` with each word of `normalized` (the result of `normalized(_:)`), in order,
    /// until it returns true; returns whether it did. Words are substrings of `normalized`
    /// (no copies), cut on scalar boundaries: a word may begin with a combining mark.
    @discardableResult
    static func first(in normalized: String, where body: (Substring) -> Bool) -> Bool {
        let scalars = normalized.unicodeScalars
        var wordStart: String.Index?
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let isWordPart = isWordScalar(scalars[index])
            if isWordPart, wordStart == nil {
                wordStart = index
            } else if !isWordPart, let start = wordStart {
                if body(Substring(scalars[start..<index])) { return true }
                wordStart = nil
            }
            scalars.formIndex(after: &index)
        }
        if let start = wordStart { return body(Substring(scalars[start...])) }
        return false
    }

    /// Every word of a raw text, normalised: for list entries and tests, not the request path.
    static func words(of text: String) -> [Substring] {
        var words: [Substring] = []
        first(in: normalized(text)) { word in
            words.append(word)
            return false
        }
        return words
    }

    /// Letters, marks and digits of any script make words; everything else (spaces,
    /// punctuation, symbols, `_`) separates them, so `ass` is no word of `class` and
    /// `bad_word` is two words.
    static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            switch scalar.value {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
            default: return false
            }
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .nonspacingMark, .spacingMark, .enclosingMark,
             .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }
}
