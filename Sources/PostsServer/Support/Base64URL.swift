/// RFC 4648 §5 base64url without padding: what tokens look like on the wire.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value = 0
            for (offset, byte) in chunk.enumerated() { value |= Int(byte) << (16 - 8 * offset) }
            for position in 0...chunk.count { out.append(alphabet[(value >> (18 - 6 * position)) & 0x3F]) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Two integers as one opaque token (cursors: a sort key and a tiebreaker).
    static func encode(_ first: Int64, _ second: Int64) -> String {
        encode(first.bigEndianByteArray + second.bigEndianByteArray)
    }

    /// The two integers of a token `encode(_:_:)` made, or nil for any other text.
    static func decodePair(_ text: String) -> (Int64, Int64)? {
        guard let bytes = decode(text), bytes.count == 16 else { return nil }
        return (Int64(bigEndianBytes: bytes[0..<8]), Int64(bigEndianBytes: bytes[8..<16]))
    }

    /// The bytes, or nil for text that is not unpadded base64url.
    static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            guard let value = alphabet.firstIndex(of: byte) else { return nil }
            values.append(UInt8(value))
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var index = 0
        while index < values.count {
            let group = values[index..<min(index + 4, values.count)]
            var value = 0
            for (offset, sextet) in group.enumerated() { value |= Int(sextet) << (18 - 6 * offset) }
            for position in 0..<(group.count - 1) { out.append(UInt8((value >> (16 - 8 * position)) & 0xFF)) }
            index += 4
        }
        return out
    }

    /// The shape of a token we issue (43 characters of the alphabet), checked before any
    /// database work so that garbage costs nothing.
    static func isToken(_ text: String) -> Bool {
        text.utf8.count == 43 && text.utf8.allSatisfy { alphabet.contains($0) }
    }
}
