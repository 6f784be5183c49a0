import Foundation
@testable import PostsServer
import Testing

/// What each push service is sent, and what each of its documented answers means for the
/// push and the token.
@Suite struct ProviderMessagesTests {
    static func payload(fullName: String = "Ash Ketchum", post: Int64? = 42, comment: String? = nil) -> PushPayload {
        PushPayload(notificationID: 7, type: "post.liked", recipientID: 2, actorID: 1, actorUsername: "ash",
                    actorFullName: fullName, postID: post, commentID: comment, tokens: [])
    }

    static func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func theAPNsPayload_hasTheAlertBadgeThreadAndNotification() throws {
        let object = try Self.json(Self.payload(comment: "c-1").apnsPayload(badge: 3))
        let aps = try #require(object["aps"] as? [String: Any])
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == "Ash Ketchum" && alert["body"] as? String == "@ash liked your post")
        #expect(aps["badge"] as? Int == 3 && aps["sound"] as? String == "default")
        #expect(aps["thread-id"] as? String == "post-42" && aps["mutable-content"] as? Int == 1)
        let notification = try #require(object["notification"] as? [String: Any])
        #expect(notification["id"] as? Int == 7 && notification["type"] as? String == "post.liked")
        #expect(notification["post_id"] as? Int == 42 && notification["comment_id"] as? String == "c-1")
        #expect(try Self.json(Self.payload(post: nil).apnsPayload(badge: 0))["notification"].map { ($0 as? [String: Any])?["post_id"] == nil } == true)
    }

    @Test func anAPNsPayload_overFourKiB_isShortenedToFit() throws {
        let long = Self.payload(fullName: String(repeating: "é\u{1}", count: 3000))
        let bytes = long.apnsPayload(badge: 1)
        #expect(bytes.count <= PushPayload.apnsLimit)
        let alert = try #require((try Self.json(bytes)["aps"] as? [String: Any])?["alert"] as? [String: Any])
        #expect((alert["title"] as? String)?.hasSuffix("…") == true && alert["body"] as? String == "@ash liked your post")
    }

    @Test func theFCMMessage_andTheWebPushMessage_carryTheSameNotification() throws {
        let message = try #require(try Self.json(Self.payload().fcmMessage(token: "tok"))["message"] as? [String: Any])
        #expect(message["token"] as? String == "tok")
        #expect((message["notification"] as? [String: Any])?["body"] as? String == "@ash liked your post")
        let data = try #require(message["data"] as? [String: Any])
        #expect(data["notification_id"] as? String == "7" && data["post_id"] as? String == "42" && data["type"] as? String == "post.liked")
        let android = try #require(message["android"] as? [String: Any])
        #expect(android["collapse_key"] as? String == "post-42")
        #expect((android["notification"] as? [String: Any])?["tag"] as? String == "post-42")
        let page = try Self.json(Self.payload().webPushMessage(badge: 5))
        #expect(page["title"] as? String == "Ash Ketchum" && page["badge"] as? Int == 5 && page["tag"] as? String == "post-42")
        #expect((page["notification"] as? [String: Any])?["id"] as? Int == 7)
    }

    @Test func apnsAnswers_meanWhatApplesDocumentSays() {
        let reason = { (text: String) in Array(#"{"reason":"\#(text)"}"#.utf8) }
        #expect(ProviderVerdict.apns(status: 200, body: []) == .delivered)
        #expect(ProviderVerdict.apns(status: 410, body: reason("Unregistered")) == .removeToken("Unregistered"))
        #expect(ProviderVerdict.apns(status: 400, body: reason("BadDeviceToken")) == .removeToken("BadDeviceToken"))
        #expect(ProviderVerdict.apns(status: 400, body: reason("DeviceTokenNotForTopic")) == .removeToken("DeviceTokenNotForTopic"))
        #expect(ProviderVerdict.apns(status: 403, body: reason("ExpiredProviderToken")) == .renewCredentials)
        #expect(ProviderVerdict.apns(status: 429, body: reason("TooManyRequests"), retryAfter: "3") == .retry("TooManyRequests", after: 3))
        #expect(ProviderVerdict.apns(status: 503, body: reason("ServiceUnavailable")) == .retry("ServiceUnavailable", after: nil))
        #expect(ProviderVerdict.apns(status: 500, body: Array("not json".utf8)) == .retry("HTTP 500", after: nil))
        #expect(ProviderVerdict.apns(status: 413, body: reason("PayloadTooLarge")) == .dropped("PayloadTooLarge"))
        #expect(ProviderVerdict.apns(status: 403, body: reason("InvalidProviderToken")) == .dropped("InvalidProviderToken"))
    }

    @Test func fcmAnswers_meanWhatFirebasesDocumentSays() {
        func error(_ code: Int, _ status: String, _ message: String, fcm: String? = nil) -> [UInt8] {
            let details = fcm.map { #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"# } ?? ""
            return Array(#"{"error":{"code":\#(code),"message":"\#(message)","status":"\#(status)"\#(details)}}"#.utf8)
        }
        #expect(ProviderVerdict.fcm(status: 200, body: Array(#"{"name":"projects/p/messages/1"}"#.utf8)) == .delivered)
        #expect(ProviderVerdict.fcm(status: 404, body: error(404, "NOT_FOUND", "Requested entity was not found.", fcm: "UNREGISTERED"))
                == .removeToken("UNREGISTERED"))
        #expect(ProviderVerdict.fcm(status: 400, body: error(400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token"))
                == .removeToken("INVALID_ARGUMENT"))
        #expect(ProviderVerdict.fcm(status: 400, body: error(400, "INVALID_ARGUMENT", "Invalid JSON payload received."))
                == .dropped("INVALID_ARGUMENT: Invalid JSON payload received."))
        #expect(ProviderVerdict.fcm(status: 401, body: error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")) == .renewCredentials)
        #expect(ProviderVerdict.fcm(status: 429, body: error(429, "RESOURCE_EXHAUSTED", "Quota exceeded", fcm: "QUOTA_EXCEEDED"), retryAfter: "60")
                == .retry("QUOTA_EXCEEDED", after: 60))
        #expect(ProviderVerdict.fcm(status: 503, body: error(503, "UNAVAILABLE", "The service is currently unavailable."), retryAfter: "10")
                == .retry("UNAVAILABLE", after: 10))
    }

    @Test func webPushAnswers_meanWhatRFC8030Says() {
        #expect(ProviderVerdict.webPush(status: 201) == .delivered)
        #expect(ProviderVerdict.webPush(status: 410) == .removeToken("HTTP 410"))
        #expect(ProviderVerdict.webPush(status: 404) == .removeToken("HTTP 404"))
        #expect(ProviderVerdict.webPush(status: 429, retryAfter: "5") == .retry("HTTP 429", after: 5))
        #expect(ProviderVerdict.webPush(status: 502, retryAfter: "soon") == .retry("HTTP 502", after: nil))
        #expect(ProviderVerdict.webPush(status: 413) == .dropped("HTTP 413"))
        #expect(ProviderVerdict.webPush(status: 403) == .dropped("HTTP 403"))
    }
}
