import Foundation

/// One outgoing message as SMTP's DATA carries it (RFC 5322 and MIME): headers, a blank
/// line, the body as UTF-8 text. Pure: the mailer hands the bytes to libcurl, which does
/// the dot-stuffing of lines that start with a dot.
struct MailMessage: Sendable, Equatable {
    var from: MailSender
    /// Checked by `EmailAddress.isPlausibleMailbox` before a message is made.
    var to: String
    var subject: String
    var body: String
    var date: Date
    /// With its angle brackets: `<…@domain>`.
    var messageID: String

    /// CRLF line ends throughout; the body quoted-printable when it is not plain 7-bit ASCII
    /// in short lines (any relay takes that, 8BITMIME or not).
    var rendered: [UInt8] {
        let lines = body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            .split(separator: "\n", omittingEmptySubsequences: false)
        let isPlain = lines.allSatisfy { line in line.utf8.count <= 76 && line.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }
        let headers = [
            "From: \(from.headerValue)",
            "To: \(to)",
            "Subject: \(MailHeaderText.unstructured(subject))",
            "Date: \(MailHeaderText.date(date))",
            "Message-ID: \(messageID)",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: \(isPlain ? "7bit" : "quoted-printable")",
        ]
        let bodyLines = isPlain ? lines.map(String.init) : lines.flatMap { Self.quotedPrintable($0) }
        return Array((headers.joined(separator: "\r\n") + "\r\n\r\n" + bodyLines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    /// A Message-ID under the sender's domain: unique by a random UUID.
    static func makeMessageID(domain: Substring) -> String {
        "<\(UUID().uuidString.lowercased())@\(domain)>"
    }

    /// RFC 2045 §6.7 for one line of text: bytes outside printable ASCII, `=`, and white
    /// space at the end of the line as `=XX`; soft line breaks (`=`) keep each output
    /// line within 76 characters.
    static func quotedPrintable(_ line: Substring) -> [String] {
        let bytes = Array(line.utf8)
        var output: [String] = []
        var current = ""
        for (index, byte) in bytes.enumerated() {
            let isLast = index == bytes.count - 1
            let literal = (byte >= 0x21 && byte <= 0x7E && byte != UInt8(ascii: "="))
                || ((byte == 0x20 || byte == 0x09) && !isLast)
            let piece = literal ? String(UnicodeScalar(byte)) : String(format: "=%02X", byte)
            // Room for the piece and a soft break's "=" (the last piece needs none).
            if current.utf8.count + piece.utf8.count > (isLast ? 76 : 75) {
                output.append(current + "=")
                current = ""
            }
            current += piece
        }
        output.append(current)
        return output
    }
}
