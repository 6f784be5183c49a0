/// A header value of the form `value *( OWS ";" OWS name=value )` (RFC 9110 §5.6.6), the
/// shape of both `Content-Type` and `Content-Disposition`. Parameter values are tokens or
/// quoted strings with `\` escapes.
struct HeaderParameters: Sendable {
    /// What comes before the first `;` (`multipart/form-data`, `form-data`), as sent.
    var value: String
    /// Names lowercased, because parameter names are case-insensitive.
    private var parameters: [(name: String, value: String)]

    /// Nil when the text does not have that shape, or names a parameter twice: a second
    /// `name` or `boundary` is ambiguous, and guessing which one counts is how two readers
    /// of the same body come to disagree.
    init?(parsing text: String) {
        var rest = Array(text.utf8)[...]
        rest.skipWhitespace()
        let value = rest.prefix { RequestParser.isTokenByte($0) || $0 == UInt8(ascii: "/") }
        guard !value.isEmpty else { return nil }
        rest.removeFirst(value.count)
        self.value = String(decoding: value, as: UTF8.self)
        parameters = []
        while true {
            rest.skipWhitespace()
            guard let separator = rest.popFirst() else { return }
            guard separator == UInt8(ascii: ";") else { return nil }
            rest.skipWhitespace()
            // RFC 9110 allows empty parameters (`a; ; b=c`, a trailing `;`).
            if rest.isEmpty || rest.first == UInt8(ascii: ";") { continue }
            guard let parameter = Self.parseParameter(&rest),
                  !parameters.contains(where: { $0.name == parameter.name })
            else { return nil }
            parameters.append(parameter)
        }
    }

    /// The value of the parameter with that lowercase name.
    subscript(name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    private static func parseParameter(_ rest: inout ArraySlice<UInt8>) -> (name: String, value: String)? {
        let name = rest.prefix(while: RequestParser.isTokenByte)
        guard !name.isEmpty else { return nil }
        rest.removeFirst(name.count)
        // Whitespace around `=` is not in RFC 9110's grammar but was in RFC 2616's implied
        // LWS, and accepting it changes the meaning of nothing.
        rest.skipWhitespace()
        guard rest.popFirst() == UInt8(ascii: "=") else { return nil }
        rest.skipWhitespace()
        let value: [UInt8]
        if rest.first == UInt8(ascii: "\"") {
            guard let quoted = parseQuotedString(&rest) else { return nil }
            value = quoted
        } else {
            let token = rest.prefix(while: RequestParser.isTokenByte)
            guard !token.isEmpty else { return nil }
            rest.removeFirst(token.count)
            value = Array(token)
        }
        return (String(decoding: name, as: UTF8.self).lowercased(), String(decoding: value, as: UTF8.self))
    }

    /// RFC 9110 §5.6.4: the unescaped content of a quoted string at the front of `rest`.
    private static func parseQuotedString(_ rest: inout ArraySlice<UInt8>) -> [UInt8]? {
        rest.removeFirst()
        var content: [UInt8] = []
        while let byte = rest.popFirst() {
            switch byte {
            case UInt8(ascii: "\""):
                return content
            case UInt8(ascii: "\\"):
                guard let escaped = rest.popFirst(), isQuotedText(escaped) else { return nil }
                content.append(escaped)
            default:
                guard isQuotedText(byte) else { return nil }
                content.append(byte)
            }
        }
        return nil
    }

    /// Any byte but controls (tab excepted) and DEL; obs-text is let through as UTF-8.
    private static func isQuotedText(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\t") || (byte >= 0x20 && byte != 0x7F)
    }
}

extension ArraySlice<UInt8> {
    fileprivate mutating func skipWhitespace() {
        while let byte = first, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { removeFirst() }
    }
}
