import Foundation
import HTTP

/// An email address as accounts are keyed by it: trimmed and lowercased (API.md: users'
/// emails are stored lowercased), and one plausible mailbox: it goes into SMTP commands and
/// a `To:` header as it is, so nothing in it may end a line, open or close an address,
/// or name a second recipient.
struct EmailAddress: Sendable, Hashable, CustomStringConvertible {
    let value: String

    /// At most this many bytes in all (RFC 5321's path limit less its angle brackets).
    static let maxBytes = 254

    /// 422 for anything that is not exactly one `local@domain`: no CR, LF, space or other
    /// control or white-space character, none of RFC 5322's specials (`<`, `>`, `,`, `;`,
    /// `:`, quotes, brackets, backslash), one `@`, at most 254 bytes.
    init(_ text: String) throws(APIError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard Self.isPlausibleMailbox(trimmed) else {
            throw APIError.invalid("email must be one address like name@example.com")
        }
        // The domain remote accounts are keyed under (`RemoteActors`): no one signs in as one.
        guard !trimmed.hasSuffix("@" + Self.remoteAccountsDomain) else {
            throw APIError.invalid("email must be an address that can receive mail")
        }
        value = trimmed
    }

    /// What remote accounts' `users.email` ends with: `.invalid` (RFC 2606) receives no mail.
    static let remoteAccountsDomain = "remote.invalid"

    /// The check alone, for addresses that do not key an account (`MAIL_FROM`, rows an
    /// external writer put in the outbox).
    static func isPlausibleMailbox(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard text.utf8.count <= maxBytes, parts.count == 2, let local = parts.first, let domain = parts.last,
              !local.isEmpty, local.utf8.count <= 64, !domain.isEmpty, !domain.hasPrefix("."), !domain.hasSuffix(".")
        else { return false }
        return text.unicodeScalars.allSatisfy { scalar in
            scalar.value > 0x20 && scalar.value != 0x7F && !(0x80...0x9F).contains(scalar.value)
                && !scalar.properties.isWhitespace && scalar.properties.generalCategory != .format
                && !forbidden.contains(scalar)
        }
    }

    /// RFC 5322's specials other than `@` and `.`: each could end an address or start a
    /// second one in a header or an SMTP command.
    private static let forbidden: Set<Unicode.Scalar> = ["<", ">", ",", ";", ":", "\"", "\\", "(", ")", "[", "]"]

    var localPart: Substring { value[..<value.firstIndex(of: "@")!] }

    var domain: Substring { value[value.index(after: value.firstIndex(of: "@")!)...] }

    var description: String { value }
}
