/// An `@username` of a post's title, summary or body, or of a comment's body, that named
/// someone when the text was written (API.md "Mentions"). `start` and `end` are UTF-8 byte
/// offsets of `@username` in the field named by `field`; `userID` stays the person's
/// through a rename (`username` is the name as it was resolved).
public struct Mention: Codable, Sendable, Equatable, Hashable {
    public let userID: Int
    public let username: String
    /// `title`, `summary` or `body`.
    public let field: String
    public let start: Int
    public let end: Int

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case username, field, start, end
    }

    public init(userID: Int, username: String, field: String, start: Int, end: Int) {
        self.userID = userID
        self.username = username
        self.field = field
        self.start = start
        self.end = end
    }

    /// The mention's range in `text` (the field it names), or nil when the offsets do not
    /// fall on character boundaries of it.
    public func range(in text: String) -> Range<String.Index>? {
        let utf8 = text.utf8
        guard start >= 0, start <= end, end <= utf8.count,
              let lower = utf8.index(utf8.startIndex, offsetBy: start, limitedBy: utf8.endIndex)
                .flatMap({ $0.samePosition(in: text) }),
              let upper = utf8.index(utf8.startIndex, offsetBy: end, limitedBy: utf8.endIndex)
                .flatMap({ $0.samePosition(in: text) })
        else { return nil }
        return lower..<upper
    }
}
