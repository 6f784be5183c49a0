/// Percent-decoding of URL components (RFC 3986 §2.1), as a pure function.
enum PercentDecoding {
    /// The decoded text, or nil when an escape is malformed or the result is not UTF-8.
    /// `plusAsSpace` applies the form-encoding rule used in query strings.
    static func decode<S: StringProtocol>(_ text: S, plusAsSpace: Bool) -> String? {
        let utf8 = text.utf8
        if !utf8.contains(UInt8(ascii: "%")) && !(plusAsSpace && utf8.contains(UInt8(ascii: "+"))) {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let high = utf8.index(after: index)
                guard high < utf8.endIndex else { return nil }
                let low = utf8.index(after: high)
                guard low < utf8.endIndex, let h = hexValue(utf8[high]), let l = hexValue(utf8[low]) else { return nil }
                bytes.append(h << 4 | l)
                index = utf8.index(after: low)
            } else {
                bytes.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index = utf8.index(after: index)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
