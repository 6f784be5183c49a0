import Foundation
@testable import PostsServer
import Testing

/// The pure parts of push: the body's JSON and text, the signature, and what counts as
/// delivered (no I/O).
@Suite struct PushPayloadTests {
    private func payload(type: String = "post.liked", fullName: String = "", commentID: String? = nil,
                         tokens: [PushPayload.Token] = []) -> PushPayload {
        PushPayload(notificationID: 7, type: type, recipientID: 1, actorID: 2, actorUsername: "alice",
                    actorFullName: fullName, postID: 3, commentID: commentID, tokens: tokens)
    }

    private func decoded(_ payload: PushPayload) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(payload.body)) as? [String: Any])
    }

    @Test func body_isAPIsShape_inItsOrder() {
        let body = String(decoding: payload(commentID: "c0ffee00-0000-4000-8000-000000000000",
                                            tokens: [.init(platform: "apns", token: "t1", deviceID: nil)]).body, as: UTF8.self)
        #expect(body == #"{"id":7,"type":"post.liked","recipient_id":1,"push_tokens":[{"platform":"apns","token":"t1","device_id":null}],"#
            + #""title":"@alice","body":"@alice liked your post","data":{"notification_id":7,"type":"post.liked","actor_id":2,"#
            + #""post_id":3,"comment_id":"c0ffee00-0000-4000-8000-000000000000"}}"#)
    }

    @Test func everyType_hasItsText() {
        let texts = [
            "post.liked": "@alice liked your post", "comment.liked": "@alice liked your comment",
            "post.commented": "@alice commented on your post", "comment.replied": "@alice replied to your comment",
            "post.replied": "@alice replied to your post", "mentioned": "@alice mentioned you",
            "followed": "@alice started following you",
        ]
        for (type, text) in texts { #expect(payload(type: type).text == text, "\(type)") }
    }

    @Test func title_isTheFullName_escaped_orTheUsername() throws {
        #expect(payload(fullName: "   ").title == "@alice")
        let tricky = "Al \"the\" \\ice\n\u{1}</script>"
        let body = try decoded(payload(fullName: tricky, tokens: [.init(platform: "fcm", token: "a\"b\\c", deviceID: "d\"")]))
        #expect(body["title"] as? String == tricky.trimmingCharacters(in: .whitespacesAndNewlines))
        let token = try #require((body["push_tokens"] as? [[String: Any]])?.first)
        #expect(token["token"] as? String == "a\"b\\c" && token["device_id"] as? String == "d\"")
        #expect((body["data"] as? [String: Any])?["comment_id"] == nil)
    }

    @Test func signature_isTheLowercaseHexHMACSHA256() {
        // RFC 4231-style check against a well-known vector.
        #expect(PushWebhookClient.signature(of: Array("The quick brown fox jumps over the lazy dog".utf8), secret: "key")
            == "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8")
    }

    @Test func only2xx_delivers() {
        func outcome(_ curl: Int, _ status: Int, cutShort: Bool = false, cancelled: Bool = false) -> PushOutcome {
            PushOutcome.classify(curlCode: curl, status: status, message: "curl says", answer: Array("nope\r\n".utf8), cutShort: cutShort,
                                 cancelled: cancelled)
        }
        #expect(outcome(0, 200) == .delivered)
        #expect(outcome(0, 204) == .delivered)
        #expect(outcome(23, 202, cutShort: true) == .delivered)
        #expect(outcome(0, 500) == .retry("HTTP 500: nope"))
        #expect(outcome(0, 301) == .retry("HTTP 301: nope"))
        #expect(outcome(0, 400) == .retry("HTTP 400: nope"))
        #expect(outcome(7, 0) == .retry("curl says"))
        #expect(outcome(28, 200) == .retry("curl says (after HTTP 200)"))
        #expect(outcome(42, 0, cancelled: true) == .retry("stopped while sending: curl says"))
        #expect(outcome(0, 410) == .retry("HTTP 410: nope"))
    }

    @Test func a410_namesTheInvalidTokens() {
        func outcome(_ body: String, cutShort: Bool = false) -> PushOutcome {
            PushOutcome.classify(curlCode: 0, status: 410, message: "", answer: Array(body.utf8), cutShort: cutShort, cancelled: false)
        }
        #expect(outcome(#"{"invalid_tokens":["a","b"]}"#) == .invalidTokens(["a", "b"]))
        #expect(outcome(#"{"invalid_tokens":[]}"#) == .invalidTokens([]))
        // Anything else is an error like another: tried again.
        #expect(outcome(#"{"invalid_tokens":["a",1]}"#) == .retry(#"HTTP 410: {"invalid_tokens":["a",1]}"#))
        #expect(outcome(#"{"invalid_tokens":"a"}"#) == .retry(#"HTTP 410: {"invalid_tokens":"a"}"#))
        #expect(outcome("gone") == .retry("HTTP 410: gone"))
        #expect(outcome(#"{"invalid_tokens":["a"]}"#, cutShort: true) == .retry(#"HTTP 410: {"invalid_tokens":["a"]}"#))
    }
}
