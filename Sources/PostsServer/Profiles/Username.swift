/// API.md's usernames: 3..30 of `[a-z0-9_.]`, unique ignoring case.
enum Username {
    static let lengths = 3...30

    /// Names no one may take: the reserved user's (`ReservedUser`).
    static let reserved: Set<String> = [ReservedUser.username]

    /// The base of an email whose local part gives none (or one the word filter refuses).
    static let fallbackBase = "user"

    /// The base a new user's username is made from: the email's local part, lowercased,
    /// reduced to the allowed characters, padded to 3 and cut to leave room for a suffix.
    static func base(for email: EmailAddress) -> String {
        var base = String(email.localPart.unicodeScalars.filter(isAllowed).map(Character.init))
        if base.isEmpty { base = fallbackBase }
        while base.count < lengths.lowerBound { base += "_" }
        return String(base.prefix(lengths.upperBound - 6))
    }

    /// The candidates tried in order: the base, then the base with 2, 3, … appended.
    static func candidates(from base: String, count: Int = 20) -> [String] {
        ([base] + (2...count).map { "\(base)\($0)" }).filter { !reserved.contains($0) }
    }

    /// A username a user chose: 422 unless it follows the rules.
    static func validate(_ text: String) throws(APIError) -> String {
        guard lengths.contains(text.unicodeScalars.count), text.unicodeScalars.allSatisfy(isAllowed) else {
            throw APIError.invalid("username must be 3 to 30 of a-z, 0-9, _ and .")
        }
        guard !reserved.contains(text.lowercased()) else { throw APIError.conflict("that username is taken") }
        return text
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "0"..."9", "_", ".": true
        default: false
        }
    }
}
