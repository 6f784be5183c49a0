/// A `#tag` of a post's title, summary or body, or of a comment's body (API.md "Search and
/// hashtags"). `name` is the tag's folded name (case, accents and width: `#Café`, `#CAFE`
/// and `#cafe` are all `cafe`), the one `PostsClient.tag(_:)` and `tagPosts(_:)` take; the
/// text as written is at `start..<end`, UTF-8 byte offsets of `#…` in the field named by
/// `field`, as for mentions (`range(in:)`).
public struct Hashtag: Codable, Sendable, Equatable, Hashable {
    public let name: String
    /// `title`, `summary` or `body`.
    public let field: String
    public let start: Int
    public let end: Int

    public init(name: String, field: String, start: Int, end: Int) {
        self.name = name
        self.field = field
        self.start = start
        self.end = end
    }

    /// The tag's range in `text` (the field it names), `#` included, or nil when the
    /// offsets do not fall on character boundaries of it.
    public func range(in text: String) -> Range<String.Index>? {
        text.range(utf8Start: start, end: end)
    }
}
