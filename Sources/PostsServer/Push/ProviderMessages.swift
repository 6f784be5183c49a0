import Foundation

/// What each push service is sent for one notification (API.md "Push to every device"):
/// the same title and text as the webhook's, shaped as APNs, FCM HTTP v1 and a Web Push
/// page expect. Pure: the recipient's unread count (the badge) and the token are given.
extension PushPayload {
    /// APNs takes at most 4 KiB of payload.
    static let apnsLimit = 4096

    /// Groups a post's notifications on the device: `thread-id`, `apns-collapse-id`, FCM's
    /// `collapse_key` and `tag` (at most 64 bytes, as APNs allows for its collapse id).
    var thread: String { postID.map { "post-\($0)" } ?? type }

    /// `{"aps":{"alert":{"title","body"},"badge","sound","thread-id","mutable-content":1},
    /// "notification":{"id","type","post_id"?,"comment_id"?}}`, the title and text shortened
    /// when it would pass `apnsLimit`.
    func apnsPayload(badge: Int) -> [UInt8] {
        var title = self.title, text = self.text
        var bytes = apnsPayload(title: title, text: text, badge: badge)
        // Over: the longer of the two loses a quarter at a time (a name or a text of
        // kilobytes); the rest of the payload is a few hundred bytes at most.
        while bytes.count > Self.apnsLimit, title.count + text.count > 16 {
            if title.count > text.count { title = Self.shortened(title) } else { text = Self.shortened(text) }
            bytes = apnsPayload(title: title, text: text, badge: badge)
        }
        return bytes
    }

    private func apnsPayload(title: String, text: String, badge: Int) -> [UInt8] {
        var alert = JSONObject()
        alert.add("title", title)
        alert.add("body", text)
        var aps = JSONObject()
        aps.add("alert", alert)
        aps.add("badge", badge)
        aps.add("sound", "default")
        aps.add("thread-id", thread)
        aps.add("mutable-content", 1)
        var object = JSONObject()
        object.add("aps", aps)
        object.add("notification", notificationObject)
        return object.finished
    }

    /// FCM HTTP v1's `messages:send` body for one token.
    func fcmMessage(token: String) -> [UInt8] {
        var notification = JSONObject()
        notification.add("title", title)
        notification.add("body", text)
        var androidNotification = JSONObject()
        androidNotification.add("tag", thread)
        var android = JSONObject()
        android.add("collapse_key", thread)
        android.add("notification", androidNotification)
        var message = JSONObject()
        message.add("token", token)
        message.add("notification", notification)
        message.add("data", dataStrings)
        message.add("android", android)
        var object = JSONObject()
        object.add("message", message)
        return object.finished
    }

    /// What a page's service worker gets (encrypted, `WebPushEncryption`): `{"title",
    /// "body","badge","tag","notification":{…}}`, ready for `showNotification`.
    func webPushMessage(badge: Int) -> [UInt8] {
        var object = JSONObject()
        object.add("title", title)
        object.add("body", text)
        object.add("badge", badge)
        object.add("tag", thread)
        object.add("notification", notificationObject)
        return object.finished
    }

    private var notificationObject: JSONObject {
        var object = JSONObject()
        object.add("id", notificationID)
        object.add("type", type)
        if let postID { object.add("post_id", postID) }
        if let commentID { object.add("comment_id", commentID) }
        return object
    }

    /// FCM's `data` takes strings only.
    private var dataStrings: JSONObject {
        var object = JSONObject()
        object.add("notification_id", String(notificationID))
        object.add("type", type)
        if let postID { object.add("post_id", String(postID)) }
        if let commentID { object.add("comment_id", commentID) }
        return object
    }

    /// Three quarters of it and an ellipsis: strictly shorter from 8 characters on.
    private static func shortened(_ text: String) -> String {
        text.count < 8 ? text : String(text.prefix(text.count * 3 / 4)) + "…"
    }
}
