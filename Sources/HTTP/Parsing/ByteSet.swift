/// A class of bytes (a grammar's `tchar`, RFC 2046's `bchars`) as a table, so that testing
/// a byte of a request costs one lookup.
struct ByteSet: Sendable {
    private let members: [Bool]

    /// ASCII letters and digits, and the bytes of `others`.
    init(alphanumericsAnd others: String) {
        members = (0..<256).map { value in
            let byte = UInt8(value)
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "A")...UInt8(ascii: "Z"):
                return true
            default:
                return others.utf8.contains(byte)
            }
        }
    }

    func contains(_ byte: UInt8) -> Bool { members[Int(byte)] }
}
