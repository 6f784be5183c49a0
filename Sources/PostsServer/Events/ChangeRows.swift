import Foundation

/// One row of `changes` as an event makes it (API.md "Changes and live events"): its type,
/// what the feed's filters look at, and the type's own fields as one JSON object.
struct ChangeRow: Sendable, Equatable {
    enum Kind: String, Sendable {
        case postCreated = "post.created"
        case postUpdated = "post.updated"
        case postDeleted = "post.deleted"
        case likeChanged = "like.changed"
        case commentCreated = "comment.created"
        case commentDeleted = "comment.deleted"
        case commentLiked = "comment.liked"
        case profileUpdated = "profile.updated"
        case profileDeleted = "profile.deleted"
        case followChanged = "follow.changed"
        /// Private, to each user concerned: their blocks or mutes changed (never shown; it
        /// tells their open streams to read the sets again, in order with everything else).
        case relationsChanged = "relations.changed"
    }

    let kind: Kind
    var postID: Int64?
    var parentID: Int64?
    /// A move's former parent; `reparented` tells a former root (nil) from no move.
    var oldParentID: Int64?
    var reparented = false
    let userID: Int64
    var recipientID: Int64?
    let data: [UInt8]
}

/// Which changes each event records: one per event, but for `relationsChanged` (one per
/// user concerned). The members of each type's data are API.md's, in its order.
enum ChangeRows {
    static func rows(for event: DomainEvent) -> [ChangeRow] {
        switch event {
        case .postCreated(let e):
            var data = JSONObject()
            data.addRaw("post", e.json)
            if let count = e.parentChildCount { data.add("parent_child_count", count) }
            return [ChangeRow(kind: .postCreated, postID: e.post, parentID: e.parent, userID: e.author, data: data.finished)]
        case .postUpdated(let e):
            var data = JSONObject()
            data.addRaw("post", e.json)
            if let movedFrom = e.movedFrom { data.add("old_parent_id", movedFrom) }
            return [ChangeRow(kind: .postUpdated, postID: e.post, parentID: e.parent, oldParentID: e.movedFrom ?? nil,
                              reparented: e.movedFrom != nil, userID: e.actor, data: data.finished)]
        case .postsDeleted(let e):
            var data = JSONObject()
            data.add("deleted_ids", e.deletedIDs)
            if let count = e.parentChildCount { data.add("parent_child_count", count) }
            return [ChangeRow(kind: .postDeleted, postID: e.post, parentID: e.parent, userID: e.actor, data: data.finished)]
        case .likeChanged(let e):
            var data = JSONObject()
            data.add("liked", e.liked)
            data.add("like_count", e.likeCount)
            return [ChangeRow(kind: .likeChanged, postID: e.post, parentID: e.parent, userID: e.actor, data: data.finished)]
        case .commentCreated(let e):
            var data = JSONObject()
            data.addRaw("comment", e.json)
            data.add("comment_count", e.commentCount)
            data.add("reply_to", e.replyTo.map(\.lowercasedText))
            return [ChangeRow(kind: .commentCreated, postID: e.post, parentID: e.postParent, userID: e.actor, data: data.finished)]
        case .commentDeleted(let e):
            var data = JSONObject()
            data.add("comment_id", e.comment.lowercasedText)
            data.add("comment_count", e.commentCount)
            data.add("reply_to", e.replyTo.map(\.lowercasedText))
            return [ChangeRow(kind: .commentDeleted, postID: e.post, parentID: e.postParent, userID: e.actor, data: data.finished)]
        case .commentLikeChanged(let e):
            var data = JSONObject()
            data.add("comment_id", e.comment.lowercasedText)
            data.add("liked", e.liked)
            data.add("like_count", e.likeCount)
            return [ChangeRow(kind: .commentLiked, postID: e.post, parentID: e.postParent, userID: e.actor, data: data.finished)]
        case .followChanged(let e):
            var data = JSONObject()
            data.add("follower_id", e.follower)
            data.add("followee_id", e.followee)
            data.add("following", e.following)
            data.add("followers_count", e.followersCount)
            data.add("following_count", e.followingCount)
            return [ChangeRow(kind: .followChanged, userID: e.actor, data: data.finished)]
        case .relationsChanged(let e):
            return e.users.map { ChangeRow(kind: .relationsChanged, userID: $0, recipientID: $0, data: Array("{}".utf8)) }
        case .profileUpdated(let e):
            var data = JSONObject()
            data.addRaw("profile", e.json)
            return [ChangeRow(kind: .profileUpdated, userID: e.user, data: data.finished)]
        case .profileDeleted(let e):
            return [ChangeRow(kind: .profileDeleted, userID: e.user, data: Array("{}".utf8))]
        }
    }
}

extension UUID {
    /// As API.md shows ids: lowercase, `8-4-4-4-12`.
    var lowercasedText: String { uuidString.lowercased() }
}

extension JSONObject {
    mutating func add(_ key: String, _ integers: [Int64]) {
        addRaw(key, Array("[\(integers.map(String.init).joined(separator: ","))]".utf8))
    }
}
