@testable import PostsClient
import Testing

/// The client keeps the latest of the `Read-After` tokens its answers bring.
@Suite struct ReadAfterTokenTests {
    /// Tokens of answers to requests all sent before any of them arrived.
    private static func kept(afterSentTogether tokens: [String]) -> String? {
        var kept = ReadAfterToken()
        for token in tokens { kept.keepLater(token, sentAt: 0) }
        return kept.token
    }

    @Test func theLaterPositionIsKept_inWhateverOrderAnswersArrive() {
        #expect(Self.kept(afterSentTogether: ["0/16", "0/20"]) == "0/20")
        #expect(Self.kept(afterSentTogether: ["0/20", "0/16"]) == "0/20")
        #expect(Self.kept(afterSentTogether: ["0/FFFFFFFF", "1/0"]) == "1/0")
    }

    /// "primary" (the server could not measure a write's position) is kept over any token
    /// of a request sent before it arrived, and replaced by the next request's: it must not
    /// outrank every later position for good.
    @Test func aTokenThatIsNoPosition_isReplacedOnlyByALaterRequests() {
        #expect(Self.kept(afterSentTogether: ["0/20", "primary"]) == "primary")
        #expect(Self.kept(afterSentTogether: ["primary", "0/16"]) == "primary")
        var kept = ReadAfterToken("0/10")
        let sentBefore = kept.generation
        kept.keepLater("primary", sentAt: sentBefore)
        let sentAfter = kept.generation
        kept.keepLater("0/16", sentAt: sentBefore)
        #expect(kept.token == "primary")
        kept.keepLater("0/18", sentAt: sentAfter)
        #expect(kept.token == "0/18")
    }
}
