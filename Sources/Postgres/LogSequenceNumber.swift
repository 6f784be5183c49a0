/// A position in PostgreSQL's write-ahead log (`pg_lsn`): how far a primary has written or a
/// replica has replayed. Its text form is two hexadecimal halves, `16/B374D848`.
public struct LogSequenceNumber: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let value: UInt64

    public static let zero = LogSequenceNumber(value: 0)

    public init(value: UInt64) {
        self.value = value
    }

    /// Parses the text form; nil for anything else (at most 8 hex digits a half).
    public init?(_ text: String) {
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, let high = Self.half(halves[0]), let low = Self.half(halves[1]) else { return nil }
        value = UInt64(high) << 32 | UInt64(low)
    }

    private static func half(_ text: Substring) -> UInt32? {
        let hexDigits = text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }
        guard (1...8).contains(text.utf8.count), hexDigits else { return nil }
        return UInt32(text, radix: 16)
    }

    public var description: String {
        String(value >> 32, radix: 16, uppercase: true) + "/" + String(value & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
}
