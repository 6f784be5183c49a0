import Foundation

/// Text made safe for a header line (RFC 5322 and RFC 2047): nothing that ends the line,
/// non-ASCII as encoded words, dates in RFC 5322's form.
enum MailHeaderText {
    /// An unstructured value (`Subject:`): control characters become spaces (a CR or LF
    /// could start a header of its own); non-ASCII text becomes `=?utf-8?B?…?=` words,
    /// folded so that no line passes 78 characters.
    static func unstructured(_ text: String) -> String {
        let clean = String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) ? " " : $0 }))
        if clean.unicodeScalars.allSatisfy({ $0.isASCII }) && !clean.contains("=?") { return clean }
        return encodedWords(clean)
    }

    /// A display name (`From: Name <address>`): as it is when only letters, digits and
    /// spaces, quoted when ASCII with other characters, encoded words when not ASCII.
    static func phrase(_ text: String) -> String {
        let clean = String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) ? " " : $0 }))
        if clean.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == " ") }) {
            return clean
        }
        if clean.unicodeScalars.allSatisfy(\.isASCII) && !clean.contains("=?") {
            return "\"" + clean.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return encodedWords(clean)
    }

    /// RFC 2047 B-encoding in words of at most 39 bytes of UTF-8 (52 characters of base64,
    /// 64 with the wrapping), never splitting a character, joined by folding white space.
    static func encodedWords(_ text: String) -> String {
        var words: [[UInt8]] = []
        var chunk: [UInt8] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if !chunk.isEmpty && chunk.count + bytes.count > 39 {
                words.append(chunk)
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append(chunk) }
        return words.map { "=?utf-8?B?\(Data($0).base64EncodedString())?=" }.joined(separator: "\r\n ")
    }

    /// RFC 5322 §3.3: `Tue, 24 Nov 2026 23:38:38 +0000`.
    static func date(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ number: Int?) -> String { String(format: "%02d", number ?? 0) }
        return "\(days[(parts.weekday ?? 1) - 1]), \(two(parts.day)) \(months[(parts.month ?? 1) - 1]) \(parts.year ?? 1970) "
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) +0000"
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }
}
