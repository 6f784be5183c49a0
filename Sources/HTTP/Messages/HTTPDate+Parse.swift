/// Reading a `Date` header (RFC 9110 §5.6.7's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`),
/// for the signatures of requests other servers send: pure, and strict, since a signed date
/// is compared, never guessed at. The obsolete forms (RFC 850, asctime) are refused.
extension HTTPDate {
    /// Seconds since 1970 of an IMF-fixdate; nil for anything else (a wrong weekday too).
    public static func seconds(parsing text: some StringProtocol) -> Int64? {
        let bytes = Array(text.utf8)
        // "Sun, 06 Nov 1994 08:49:37 GMT": 29 bytes, every separator in its place.
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 32, bytes[7] == 32, bytes[11] == 32,
              bytes[16] == 32, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == 32,
              bytes[26...] == Array("GMT".utf8)[...] else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        let monthName = String(decoding: bytes[8..<11], as: UTF8.self)
        guard let day = number(5..<7), let month = months.firstIndex(of: monthName).map({ Int64($0) + 1 }),
              let year = number(12..<16), let hour = number(17..<19), let minute = number(20..<22),
              let second = number(23..<25), (1...31).contains(day), hour < 24, minute < 60, second < 61,
              day <= daysIn(month: month, year: year) else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        // 1970-01-01 was a Thursday.
        let weekday = ((days % 7) + 11) % 7
        guard String(decoding: bytes[0..<3], as: UTF8.self) == ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][Int(weekday)] else {
            return nil
        }
        return days * 86_400 + hour * 3600 + minute * 60 + min(second, 59)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Howard Hinnant's days-from-civil: the proleptic Gregorian calendar, without the C library.
    private static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
