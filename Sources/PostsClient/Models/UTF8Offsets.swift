extension String {
    /// The characters between two UTF-8 byte offsets, the unit in which the server gives
    /// the place of a mention or a tag; nil when either offset is out of the text or does
    /// not fall on a character boundary (a text edited since, or offsets of another field).
    func range(utf8Start start: Int, end: Int) -> Range<String.Index>? {
        guard start >= 0, start <= end, end <= utf8.count,
              let lower = utf8.index(utf8.startIndex, offsetBy: start, limitedBy: utf8.endIndex)
                .flatMap({ $0.samePosition(in: self) }),
              let upper = utf8.index(utf8.startIndex, offsetBy: end, limitedBy: utf8.endIndex)
                .flatMap({ $0.samePosition(in: self) })
        else { return nil }
        return lower..<upper
    }
}
