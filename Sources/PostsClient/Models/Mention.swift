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
        text.range(utf8Start: start, end: end)
    }
}
