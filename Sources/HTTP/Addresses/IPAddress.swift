/// An IPv4 or IPv6 address as a value, parsed from text without the C library: the
/// addresses it reads come from `X-Forwarded-For` and `TRUSTED_PROXIES`, so what it accepts
/// must be exactly what is written here, the same on every platform.
///
/// An IPv4 address is held IPv4-mapped (`::ffff:a.b.c.d`): a peer on a dual-stack socket
/// and the same address written as IPv4 are one address, inside the same networks.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// The 128 bits, most significant first.
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    init(ipv4 value: UInt32) {
        self.init(high: 0, low: 0xffff_0000_0000 | UInt64(value))
    }

    /// `192.0.2.7`, `2001:db8::1`, `::ffff:192.0.2.7`; nil for anything else. Refused on
    /// purpose: leading zeros in an IPv4 part (some readers take `010` as octal, 8),
    /// shortened IPv4 (`127.1`), zone ids (`fe80::1%eth0`), brackets and ports.
    public init?(_ text: some StringProtocol) {
        let utf8 = text.utf8
        // The longest text form: eight groups of four and seven colons, or 45 with an IPv4 tail.
        guard !utf8.isEmpty, utf8.count <= 45 else { return nil }
        if utf8.contains(UInt8(ascii: ":")) {
            guard let (high, low) = Self.parseIPv6(Array(utf8)) else { return nil }
            self.init(high: high, low: low)
        } else {
            // Read in place: trust mode asks this of every request's `Host`.
            guard let value = Self.parseIPv4(utf8) else { return nil }
            self.init(ipv4: value)
        }
    }

    public var isIPv4: Bool { high == 0 && low >> 32 == 0xffff }

    /// 127.0.0.0/8 or ::1.
    public var isLoopback: Bool {
        isIPv4 ? (low >> 24) & 0xff == 127 : high == 0 && low == 1
    }

    /// The address with every bit past the first `bits` (of 128) cleared.
    func masked(to bits: Int) -> IPAddress {
        let highMask: UInt64 = bits <= 0 ? 0 : bits >= 64 ? .max : ~0 << (64 - bits)
        let lowMask: UInt64 = bits <= 64 ? 0 : bits >= 128 ? .max : ~0 << (128 - bits)
        return IPAddress(high: high & highMask, low: low & lowMask)
    }

    /// The canonical text: dotted decimal for IPv4 (mapped ones too), RFC 5952 for IPv6
    /// (lowercase, no leading zeros, the longest run of zero groups shortened to `::`).
    public var description: String {
        if isIPv4 {
            return (0..<4).map { String((low >> (24 - 8 * $0)) & 0xff) }.joined(separator: ".")
        }
        let groups = (0..<8).map { index -> UInt16 in
            let word = index < 4 ? high : low
            return UInt16(truncatingIfNeeded: word >> (48 - 16 * (index % 4)))
        }
        let run = Self.longestZeroRun(groups)
        func text(_ range: Range<Int>) -> String {
            groups[range].map { String($0, radix: 16) }.joined(separator: ":")
        }
        guard let run else { return text(0..<8) }
        return text(0..<run.lowerBound) + "::" + text(run.upperBound..<8)
    }

    /// The first of the longest runs of two or more zero groups (RFC 5952 §4.2).
    private static func longestZeroRun(_ groups: [UInt16]) -> Range<Int>? {
        var best: Range<Int>?
        var start: Int?
        for index in 0...groups.count {
            if index < groups.count && groups[index] == 0 {
                if start == nil { start = index }
            } else if let begin = start {
                if index - begin >= 2 && index - begin > (best?.count ?? 0) { best = begin..<index }
                start = nil
            }
        }
        return best
    }
}

extension IPAddress {
    /// Four decimal parts of 0...255, without leading zeros.
    static func parseIPv4(_ bytes: some Sequence<UInt8>) -> UInt32? {
        var value: UInt32 = 0
        var parts = 0
        var part: UInt32 = 0
        var digits = 0
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, parts < 3 else { return nil }
                value = value << 8 | part
                parts += 1
                part = 0
                digits = 0
            } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                // A second digit after a leading 0, or a fourth digit.
                guard !(digits == 1 && part == 0), digits < 3 else { return nil }
                part = part * 10 + UInt32(byte - UInt8(ascii: "0"))
                guard part <= 255 else { return nil }
                digits += 1
            } else {
                return nil
            }
        }
        guard digits > 0, parts == 3 else { return nil }
        return value << 8 | part
    }

    /// Eight groups of one to four hex digits, one `::` standing for one or more zero
    /// groups, the last two groups perhaps written as IPv4.
    static func parseIPv6(_ bytes: [UInt8]) -> (UInt64, UInt64)? {
        let text = String(decoding: bytes, as: UTF8.self)
        let halves = text.split(separator: "::", omittingEmptySubsequences: false)
        guard halves.count <= 2,
              let head = groups(halves[0], mayEndInIPv4: halves.count == 1),
              let tail = halves.count == 2 ? groups(halves[1], mayEndInIPv4: true) : [] else { return nil }
        if halves.count == 1 {
            guard head.count == 8 else { return nil }
        } else {
            guard head.count + tail.count <= 7 else { return nil }
        }
        let all = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        let high = all[0..<4].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        let low = all[4..<8].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
        return (high, low)
    }

    /// The groups of one side of `::` (or of the whole address); nil if one is malformed.
    private static func groups(_ part: Substring, mayEndInIPv4: Bool) -> [UInt16]? {
        guard !part.isEmpty else { return [] }
        let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
        var groups: [UInt16] = []
        for (index, piece) in pieces.enumerated() {
            if index == pieces.count - 1 && mayEndInIPv4 && piece.contains(".") {
                guard let value = parseIPv4(piece.utf8) else { return nil }
                groups += [UInt16(value >> 16), UInt16(value & 0xffff)]
                continue
            }
            // Hex digits only: UInt16(_:radix:) alone would take a sign ("+f").
            guard (1...4).contains(piece.utf8.count), piece.utf8.allSatisfy(isHexDigit),
                  let group = UInt16(piece, radix: 16) else { return nil }
            groups.append(group)
        }
        return groups.count <= 8 ? groups : nil
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
