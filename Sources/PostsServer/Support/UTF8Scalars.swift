/// Reading scalars out of UTF-8 bytes at a byte offset, for the parsers that give UTF-8
/// offsets (`MentionParser`, `HashtagParser`). Bytes that are not valid UTF-8
/// read as U+FFFD (a symbol), one byte at a time.
enum UTF8Scalars {
    /// The scalar that starts at `offset` and its length in bytes; nil at the end.
    static func scalar(at offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> (Unicode.Scalar, Int)? {
        guard offset < bytes.count else { return nil }
        var end = offset + 1
        while end < bytes.count, end - offset < 4, bytes[end] & 0xC0 == 0x80 { end += 1 }
        var iterator = bytes[offset..<end].makeIterator()
        var decoder = UTF8()
        if case .scalarValue(let scalar) = decoder.decode(&iterator) {
            return (scalar, scalar.utf8.count)
        }
        return ("\u{FFFD}", 1)
    }

    /// The scalar that ends just before `offset` (walking back over continuation bytes);
    /// nil at the start.
    static func scalar(before offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Unicode.Scalar? {
        guard offset > 0 else { return nil }
        var start = offset - 1
        while start > 0, offset - start < 4, bytes[start] & 0xC0 == 0x80 { start -= 1 }
        var iterator = bytes[start..<offset].makeIterator()
        var decoder = UTF8()
        if case .scalarValue(let scalar) = decoder.decode(&iterator) { return scalar }
        return "\u{FFFD}"
    }
}
