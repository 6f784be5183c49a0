import Foundation
import HTTP

/// An email address as accounts are keyed by it: trimmed and lowercased (API.md: users'
/// emails are stored lowercased), and plausible enough to send a code to.
struct EmailAddress: Sendable, Hashable, CustomStringConvertible {
    let value: String

    /// 422 for anything that is not `local@domain` without spaces or control characters.
    init(_ text: String) throws(APIError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard trimmed.utf8.count <= 254, parts.count == 2, let local = parts.first, let domain = parts.last,
              !local.isEmpty, local.utf8.count <= 64, !domain.isEmpty, !domain.hasPrefix("."), !domain.hasSuffix("."),
              trimmed.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !$0.properties.isWhitespace })
        else {
            throw APIError.invalid("email must be an address like name@example.com")
        }
        value = trimmed
    }

    var localPart: Substring { value[..<value.firstIndex(of: "@")!] }

    var description: String { value }
}
