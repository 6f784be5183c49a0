import Foundation

/// `MAIL_FROM`: an address, or a display name and an address (`Posts <noreply@example.com>`).
public struct MailSender: Sendable, Equatable {
    public var name: String?
    public var address: String

    /// The `From:` header's value: the name quoted or RFC 2047-encoded as it needs.
    var headerValue: String {
        guard let name else { return address }
        return "\(MailHeaderText.phrase(name)) <\(address)>"
    }

    /// The domain of the address: Message-IDs are made under it.
    var domain: Substring { address[address.index(after: address.lastIndex(of: "@") ?? address.startIndex)...] }

    static func parse(_ text: String) throws(Configuration.Invalid) -> MailSender {
        let invalid = Configuration.Invalid(description: "MAIL_FROM must be an address or Name <address>, "
            + "like \"Posts <noreply@example.com>\", not \"\(text.unicodeScalars.filter { $0.value >= 0x20 }.map(String.init).joined())\"")
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") else {
            guard EmailAddress.isPlausibleMailbox(trimmed) else { throw invalid }
            return MailSender(name: nil, address: trimmed)
        }
        let address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
        var name = trimmed[..<open].trimmingCharacters(in: .whitespaces)
        if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") { name = String(name.dropFirst().dropLast()) }
        guard EmailAddress.isPlausibleMailbox(address),
              !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == "<" || $0 == ">" || $0 == "\"" })
        else { throw invalid }
        return MailSender(name: name.isEmpty ? nil : name, address: address)
    }
}
