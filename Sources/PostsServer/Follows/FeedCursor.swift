/// Where the next page of a home feed starts: the last post shown (its `created_at` and id,
/// as `KeysetCursor`) and how many posts the pages before it showed, so that the feed ends
/// at its depth (API.md "Feeds at any scale": at least 800 posts, then `next_cursor` null).
struct FeedCursor: PageCursor, Equatable {
    let position: KeysetCursor
    /// Posts shown by the pages up to and including the one that handed this cursor out.
    let shown: Int

    init(position: KeysetCursor, shown: Int) {
        self.position = position
        self.shown = shown
    }

    init(_ text: String) throws(APIError) {
        guard let bytes = Base64URL.decode(text), bytes.count == 24,
              case let shown = Int64(bigEndianBytes: bytes[16..<24]), (1..<Int64(FeedService.depth)).contains(shown)
        else { throw .malformed("malformed cursor") }
        position = try KeysetCursor(Base64URL.encode(Array(bytes[0..<16])))
        self.shown = Int(shown)
    }

    var text: String {
        Base64URL.encode(position.createdAt.microsecondsSince2000.bigEndianByteArray + position.id.bigEndianByteArray
                         + Int64(shown).bigEndianByteArray)
    }
}
