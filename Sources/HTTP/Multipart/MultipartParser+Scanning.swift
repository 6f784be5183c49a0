/// Finding delimiters in the buffer without looking at most bytes twice.
extension MultipartParser {
    enum DelimiterSearch {
        /// No delimiter starts in the buffer, not even one cut off at its end.
        case notFound
        /// The buffer ends with the start of what may be a delimiter: it, or the two bytes
        /// after it that tell a close delimiter from another, are still to come.
        case possible(at: Int)
        /// A delimiter with at least two bytes after it.
        case found(at: Int)
    }

    /// The first delimiter at or after `start`. Only CRs are candidates, and each is
    /// compared with at most the delimiter's length, so a search costs about one pass.
    func searchDelimiter() -> DelimiterSearch {
        buffer.withUnsafeBufferPointer { bytes in
            delimiter.withUnsafeBufferPointer { pattern in
                let end = bytes.count
                var from = start
                while let candidate = Self.firstCR(in: bytes, from: from) {
                    var matched = 1
                    while matched < pattern.count, candidate + matched < end,
                          bytes[candidate + matched] == pattern[matched] {
                        matched += 1
                    }
                    if matched == pattern.count {
                        return candidate + matched + 2 <= end ? .found(at: candidate) : .possible(at: candidate)
                    }
                    if candidate + matched == end { return .possible(at: candidate) }
                    from = candidate + 1
                }
                return .notFound
            }
        }
    }

    /// The index of the first CR at or after `from`. Eight bytes are tested at once (a
    /// word with a zero byte after XOR with CRs), since content is mostly bytes that are not.
    static func firstCR(in bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let crs: UInt64 = 0x0D0D_0D0D_0D0D_0D0D
        var index = from
        while index + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self) ^ crs
            if (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0 { break }
            index += 8
        }
        while index < bytes.count {
            if bytes[index] == cr { return index }
            index += 1
        }
        return nil
    }

    /// Transport padding (RFC 2046 §5.1.1) and the CRLF that ends a delimiter line; false
    /// until that CRLF has arrived. Padding is consumed as it comes, so it holds no memory.
    mutating func takeDelimiterLineEnd() throws(HTTPError) -> Bool {
        while start < buffer.count, buffer[start] == Self.space || buffer[start] == Self.tab { start += 1 }
        guard start < buffer.count else { return false }
        guard buffer[start] == Self.cr, start + 1 == buffer.count || buffer[start + 1] == Self.lf else {
            throw .badRequest("multipart boundary line has more than white space before its CRLF")
        }
        guard start + 1 < buffer.count else { return false }
        start += 2
        return true
    }
}
