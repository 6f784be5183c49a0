/// Writing JSON string literals; the one escaping routine the server's JSON goes through.
public enum JSONText {
    /// Appends `text` as a quoted JSON string (RFC 8259 §7).
    public static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case UInt8(ascii: "\n"): out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20, 0x7F:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
