@testable import PostsClient
import Testing

/// The client keeps the later of the `Read-After` tokens its writes are answered with.
@Suite struct ReadAfterTokenTests {
    private static func kept(after tokens: [String]) -> String? {
        let kept = Locked<String?>(nil)
        for token in tokens { kept.keepLater(token) }
        return kept.get()
    }

    @Test func theLaterPositionIsKept_inWhateverOrderAnswersArrive() {
        #expect(Self.kept(after: ["0/16", "0/20"]) == "0/20")
        #expect(Self.kept(after: ["0/20", "0/16"]) == "0/20")
        #expect(Self.kept(after: ["0/FFFFFFFF", "1/0"]) == "1/0")
    }

    /// "primary" (the server could not read its position) sends reads to the primary until
    /// the next write's token replaces it; it must not outrank every later position.
    @Test func aTokenThatIsNoPosition_isReplacedByTheNext() {
        #expect(Self.kept(after: ["0/20", "primary"]) == "primary")
        #expect(Self.kept(after: ["primary", "0/16"]) == "0/16")
    }
}
