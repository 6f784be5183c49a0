/// Writing JSON string literals; the one escaping routine the server's JSON goes through.
public enum JSONText {
    /// Appends `text` as a quoted JSON string (RFC 8259 §7).
    public static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { appendQuoted(bytes: UnsafeRawBufferPointer($0), to: &out) }
    }

    /// Appends UTF-8 bytes (a text column straight from the database, say) as a quoted
    /// JSON string. Runs of bytes that need no escape, nearly all of them, are found eight
    /// bytes at a time and copied at once rather than byte by byte.
    public static func appendQuoted(bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        makeRoom(for: bytes.count + 2, in: &out)
        out.append(quote)
        var runStart = 0
        var index = 0
        while index < bytes.count {
            if index + 8 <= bytes.count, !mayNeedEscape(bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                index += 8
                continue
            }
            let byte = bytes[index]
            if needsEscape(byte) {
                if runStart < index { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index])) }
                appendEscape(for: byte, to: &out)
                runStart = index + 1
            }
            index += 1
        }
        if runStart < bytes.count { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart...])) }
        out.append(quote)
    }

    /// Room for `extra` more bytes, growing geometrically: `reserveCapacity` alone allocates
    /// exactly what it is asked for, so calling it for each appended field would copy the
    /// whole response again every time it ran out.
    @inline(__always)
    public static func makeRoom(for extra: Int, in out: inout [UInt8]) {
        let needed = out.count + extra
        if needed > out.capacity { out.reserveCapacity(Swift.max(needed, 2 * out.capacity)) }
    }

    /// Appends valid JSON text without the whitespace between its tokens (PostgreSQL's
    /// `json_build_object` writes `{"a" : 1, "b" : 2}`); strings are copied as they are.
    public static func appendCompacted(json bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        makeRoom(for: bytes.count, in: &out)
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == backslash {
                    escaped = true
                } else if byte == quote {
                    inString = false
                }
            } else if byte == quote {
                inString = true
            } else if byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D {
                continue
            }
            out.append(byte)
        }
    }

    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Quotes, backslashes and control characters (and DEL, which some parsers dislike).
    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F
    }

    /// Whether any of eight bytes may need an escape: false means none does. A byte below
    /// 0x20 and a zero byte (after xor with a quote, a backslash or DEL) are found with the
    /// classic word-at-a-time tests, which are exact about whether such a byte exists.
    @inline(__always)
    private static func mayNeedEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ value: UInt64) -> Bool { (value &- ones) & ~value & highs != 0 }
        let below0x20 = (word &- ones &* 0x20) & ~word & highs != 0
        return below0x20 || hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C))
            || hasZeroByte(word ^ (ones &* 0x7F))
    }

    private static func appendEscape(for byte: UInt8, to out: inout [UInt8]) {
        switch byte {
        case quote: out += [backslash, quote]
        case backslash: out += [backslash, backslash]
        case UInt8(ascii: "\n"): out += [backslash, UInt8(ascii: "n")]
        case UInt8(ascii: "\r"): out += [backslash, UInt8(ascii: "r")]
        case UInt8(ascii: "\t"): out += [backslash, UInt8(ascii: "t")]
        default:
            out += [backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
        }
    }
}
