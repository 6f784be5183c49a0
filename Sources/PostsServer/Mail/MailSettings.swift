import Foundation

/// Where and how the mailer sends (API.md "Sign-in mail (SMTP)"): `SMTP_URL`, `MAIL_FROM`
/// and `SMTP_CA_FILE`, parsed without I/O. Its description never shows the password.
public struct MailSettings: Sendable, Equatable, CustomStringConvertible {
    public enum Security: String, Sendable, Equatable {
        /// `smtp://`: plain connection upgraded with STARTTLS, which is required.
        case startTLS
        /// `smtps://`: TLS from the first byte.
        case implicitTLS
        /// `smtp://…?starttls=off`: no TLS at all (a loopback relay only, such as Mailpit).
        case none
    }

    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    public var password: String?
    public var from: MailSender
    /// An extra CA bundle (PEM) for a private relay's certificate.
    public var caFile: String?

    /// What libcurl connects to: scheme, host and port (the credentials go apart).
    var connectURL: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return "\(security == .implicitTLS ? "smtps" : "smtp")://\(bracketed):\(port)"
    }

    public var description: String {
        let login = username.map { "\($0):****@" } ?? ""
        return "\(connectURL.replacingOccurrences(of: "://", with: "://\(login)")) (\(security.rawValue)) from \(from.address)"
    }

    /// nil when `SMTP_URL` is unset (no mailer); an error naming the variable when a value
    /// is malformed or unsafe.
    public static func parse(smtpURL: String?, mailFrom: String?, caFile: String?) throws(Configuration.Invalid) -> MailSettings? {
        guard let smtpURL else { return nil }
        guard let mailFrom else {
            throw Configuration.Invalid(description: "MAIL_FROM is required with SMTP_URL: an address, or Name <address>")
        }
        var settings = try parseURL(smtpURL)
        settings.from = try MailSender.parse(mailFrom)
        settings.caFile = caFile
        return settings
    }

    private static func invalid(_ why: String) -> Configuration.Invalid {
        // The value itself is not repeated: it may hold a password.
        Configuration.Invalid(description: "SMTP_URL \(why); expected smtp://[user:password@]host[:587] "
            + "(STARTTLS; ?starttls=off for a loopback relay only) or smtps://[user:password@]host[:465]")
    }

    private static func parseURL(_ text: String) throws(Configuration.Invalid) -> MailSettings {
        let lowered = text.lowercased()
        let security: Security
        let rest: Substring
        if lowered.hasPrefix("smtp://") {
            (security, rest) = (.startTLS, text.dropFirst(7))
        } else if lowered.hasPrefix("smtps://") {
            (security, rest) = (.implicitTLS, text.dropFirst(8))
        } else {
            throw invalid("must start with smtp:// or smtps://")
        }
        let queryStart = rest.firstIndex(of: "?")
        var authority = rest[..<(queryStart ?? rest.endIndex)]
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.contains("/"), !authority.contains("#") else { throw invalid("has a path; give only the host and port") }
        var settings = MailSettings(host: "", port: security == .implicitTLS ? 465 : 587, security: security,
                                    from: MailSender(name: nil, address: ""))
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            let colon = userInfo.firstIndex(of: ":")
            guard let user = userInfo[..<(colon ?? userInfo.endIndex)].removingPercentEncoding, !user.isEmpty,
                  let password = colon.map({ userInfo[userInfo.index(after: $0)...] }).map({ $0.removingPercentEncoding }) ?? ""
            else { throw invalid("has a malformed user or password (percent-encode @, : and %)") }
            guard !(user + password).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw invalid("has a control character in its user or password")
            }
            settings.username = user
            settings.password = colon == nil ? nil : password
            authority = authority[authority.index(after: at)...]
        }
        let (host, port) = try hostAndPort(authority)
        settings.host = host
        if let port { settings.port = port }
        if let queryStart {
            let query = rest[rest.index(after: queryStart)...].lowercased()
            guard query == "starttls=off", security == .startTLS else {
                throw invalid("accepts only ?starttls=off, and only with smtp://")
            }
            guard Configuration.isLoopback(host.contains(":") ? "[\(host)]" : host) else {
                throw invalid("may use ?starttls=off only with a loopback host (127.0.0.1, ::1, localhost): "
                    + "anything else would send codes and passwords in clear")
            }
            settings.security = .none
        }
        return settings
    }

    private static func hostAndPort(_ authority: Substring) throws(Configuration.Invalid) -> (String, Int?) {
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("has an unclosed [ in its host") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("has text after its IPv6 host") }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw invalid("has a malformed IPv6 host")
            }
        } else {
            let colon = authority.firstIndex(of: ":")
            host = authority[..<(colon ?? authority.endIndex)]
            portText = colon.map { authority[authority.index(after: $0)...] }
            guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }) else {
                throw invalid("has no host, or a host with characters a host name cannot have")
            }
        }
        guard let portText else { return (String(host), nil) }
        guard let port = Int(portText), (1...65535).contains(port), portText.allSatisfy(\.isASCII) else {
            throw invalid("has a port that is not a number in 1...65535")
        }
        return (String(host), port)
    }
}

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
