import Foundation

/// API.md's time format: RFC 3339 in UTC with milliseconds, `2026-11-20T14:03:07.123Z`.
/// Formatted by hand: it runs for every timestamp of every response.
public enum Timestamp {
    public static func now() -> String { format(Date()) }

    /// An RFC 3339 time as a client sends one (a fraction and an offset optional to it).
    static func parse(_ text: String) -> Date? {
        (try? withFraction.parse(text)) ?? (try? withoutFraction.parse(text))
    }

    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let withoutFraction = Date.ISO8601FormatStyle()

    public static func format(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        return format(millisecondsSince1970: milliseconds)
    }

    public static func format(millisecondsSince1970 milliseconds: Int64) -> String {
        var out = [UInt8]()
        out.reserveCapacity(24)
        append(millisecondsSince1970: milliseconds, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The same text appended to a response being written, without a `String` between.
    public static func append(millisecondsSince1970 milliseconds: Int64, to out: inout [UInt8]) {
        var seconds = time_t(milliseconds.dividedRoundingDown(by: 1000))
        let millis = Int(milliseconds - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var value = value
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                value %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4); out.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2); out.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2); out.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2); out.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2); out.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2); out.append(UInt8(ascii: "."))
        digits(millis, 3); out.append(UInt8(ascii: "Z"))
    }
}

extension Int64 {
    fileprivate func dividedRoundingDown(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
