/// Writing JSON string literals; the one escaping routine the server's JSON goes through.
public enum JSONText {
    /// Appends `text` as a quoted JSON string (RFC 8259 §7).
    public static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { appendQuoted(bytes: UnsafeRawBufferPointer($0), to: &out) }
    }

    /// Appends UTF-8 bytes (a text column straight from the database, say) as a quoted
    /// JSON string. Runs of bytes that need no escape, nearly all of them, are copied at
    /// once rather than byte by byte.
    public static func appendQuoted(bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        out.reserveCapacity(out.count + bytes.count + 2)
        out.append(quote)
        var runStart = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard needsEscape[Int(byte)] else { continue }
            if runStart < index { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index])) }
            appendEscape(for: byte, to: &out)
            runStart = index + 1
        }
        if runStart < bytes.count { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart...])) }
        out.append(quote)
    }

    /// Appends valid JSON text without the whitespace between its tokens (PostgreSQL's
    /// `json_build_object` writes `{"a" : 1, "b" : 2}`); strings are copied as they are.
    public static func appendCompacted(json bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        out.reserveCapacity(out.count + bytes.count)
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
    private static let needsEscape: [Bool] = (0..<256).map { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }

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
