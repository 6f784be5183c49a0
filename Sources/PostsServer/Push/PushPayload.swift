import Foundation

/// The JSON body of one push (API.md "Push"): the notification, where its recipient's phones
/// can be reached, and a title and a text ready to show, so that a gateway such as gorush
/// needs no knowledge of posts to turn it into an APNs or FCM message.
struct PushPayload: Sendable {
    struct Token: Sendable, Equatable {
        let platform: String
        let token: String
        let deviceID: String?
    }

    let notificationID: Int64
    let type: String
    let recipientID: Int64
    let actorID: Int64
    let actorUsername: String
    let actorFullName: String
    let postID: Int64?
    let commentID: String?
    /// The recipient's tokens when the push was claimed (possibly none: every new
    /// notification is posted, and the receiver may know other ways to reach its user).
    let tokens: [Token]

    /// The actor's full name, or `@username` when they have none.
    var title: String {
        let name = actorFullName.trimmingCharacters(in: .whitespacesAndNewlines)
        return name.isEmpty ? "@\(actorUsername)" : name
    }

    /// `@alice liked your post`: the username always, so the text says who even when two
    /// people share a full name.
    var text: String { "@\(actorUsername) \(Self.phrase(for: type))" }

    static func phrase(for type: String) -> String {
        switch type {
        case "post.liked": "liked your post"
        case "comment.liked": "liked your comment"
        case "post.commented": "commented on your post"
        case "comment.replied": "replied to your comment"
        case "post.replied": "replied to your post"
        case "mentioned": "mentioned you"
        case "followed": "started following you"
        default: "has something new for you"
        }
    }

    /// The exact bytes posted (and signed).
    var body: [UInt8] {
        var object = JSONObject()
        object.add("id", notificationID)
        object.add("type", type)
        object.add("recipient_id", recipientID)
        object.add("push_tokens", tokens.map { token in
            var entry = JSONObject()
            entry.add("platform", token.platform)
            entry.add("token", token.token)
            entry.add("device_id", token.deviceID)
            return entry
        })
        object.add("title", title)
        object.add("body", text)
        var data = JSONObject()
        data.add("notification_id", notificationID)
        data.add("type", type)
        data.add("actor_id", actorID)
        if let postID { data.add("post_id", postID) }
        if let commentID { data.add("comment_id", commentID) }
        object.add("data", data)
        return object.finished
    }
}
