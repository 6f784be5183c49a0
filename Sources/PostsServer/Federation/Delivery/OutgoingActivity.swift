import Foundation
import Postgres

/// An activity we send (API.md "Federation", Out), built from what the database holds when
/// its `federation.publish` job runs: the JSON, who signs it, and who receives it (a query
/// of the users whose inboxes it goes to; `FederationPublish` makes them inboxes).
struct OutgoingActivity {
    enum Kind: String, Sendable {
        case createPost = "create_post"
        case updatePost = "update_post"
        case deletePost = "delete_post"
        case createComment = "create_comment"
        case deleteComment = "delete_comment"
        case like
        case undoLike = "undo_like"
        case follow
        case undoFollow = "undo_follow"
        case acceptFollow = "accept_follow"
        case block
        case undoBlock = "undo_block"
    }

    /// Who signs it: one of our users.
    let actor: Int64
    let json: [String: Any]
    /// `SELECT user_id …`: the remote users it goes to (their hosts' shared inboxes).
    let recipients: SQLQuery

    /// The payload's members, as a `federation.publish` job holds them.
    struct Order: Sendable {
        let kind: Kind
        let actor: Int64
        var post: Int64?
        var comment: UUID?
        var followee: Int64?
        var remoteActivity: String?
    }

    /// The activity the order asks for, or nil when what it is of is gone (nothing to send).
    static func build(_ order: Order, urls: FederationURLs, notes: NoteDocuments, clock: ServerClock,
                      on connection: PostgresConnection) throws -> OutgoingActivity? {
        let actorID = urls.actor(order.actor)
        let followers: SQLQuery = "SELECT follower_id FROM follows WHERE followee_id = \(order.actor)"
        let stamp = String(clock.millisecondsSince1970)
        func envelope(_ type: String, id: String, object: Any, to: [String]? = nil, cc: [String]? = nil) -> [String: Any] {
            var activity: [String: Any] = ["id": id, "type": type, "actor": actorID, "object": object]
            if let to { activity["to"] = to }
            if let cc { activity["cc"] = cc }
            return activity
        }
        switch order.kind {
        case .createPost, .updatePost:
            guard let post = order.post, case .note(let note)? = try notes.post(post, on: connection) else { return nil }
            let id = order.kind == .createPost ? "\(urls.post(post))/activity" : "\(urls.post(post))#updates/\(stamp)"
            var activity = envelope(order.kind == .createPost ? "Create" : "Update", id: id, object: note,
                                    to: note["to"] as? [String], cc: Self.audience(of: note))
            activity["published"] = note["published"]
            return OutgoingActivity(actor: order.actor, json: activity, recipients: """
                \(followers) UNION SELECT p.user_id FROM posts c JOIN posts p ON p.id = c.parent_id WHERE c.id = \(post)
                UNION \(mentioned("SELECT mentions FROM posts WHERE id = \(post)"))
                """)
        case .createComment:
            guard let comment = order.comment, case .note(let note)? = try notes.comment(comment, on: connection) else { return nil }
            var activity = envelope("Create", id: "\(urls.comment(comment))/activity", object: note,
                                    to: note["to"] as? [String], cc: Self.audience(of: note))
            activity["published"] = note["published"]
            return OutgoingActivity(actor: order.actor, json: activity, recipients: """
                \(followers) UNION SELECT p.user_id FROM comments c JOIN posts p ON p.id = c.post_id WHERE c.id = \(comment)
                UNION SELECT r.user_id FROM comments c JOIN comments r ON r.id = c.reply_to WHERE c.id = \(comment)
                UNION \(mentioned("SELECT mentions FROM comments WHERE id = \(comment)"))
                """)
        case .deletePost, .deleteComment:
            guard let object = order.post.map(urls.post) ?? order.comment.map(urls.comment) else { return nil }
            let activity = envelope("Delete", id: "\(object)#delete", object: ["id": object, "type": "Tombstone"],
                                    to: [ActivityPub.publicCollection], cc: [urls.followers(order.actor)])
            return OutgoingActivity(actor: order.actor, json: activity, recipients: followers)
        case .like, .undoLike:
            guard let post = order.post else { return nil }
            let target = try connection.query("SELECT uri, actor_id FROM remote_objects WHERE post_id = \(post)").first
            guard let target else { return nil }
            let uri: String = try target.decode("uri")
            let author: Int64 = try target.decode("actor_id")
            let like = envelope("Like", id: "\(actorID)#likes/\(post)", object: uri)
            let activity = order.kind == .like ? like
                : envelope("Undo", id: "\(actorID)#likes/\(post)/undo/\(stamp)", object: like)
            return OutgoingActivity(actor: order.actor, json: activity, recipients: "SELECT \(author)::bigint")
        case .follow, .undoFollow, .block, .undoBlock:
            // `followee`: the remote account followed or blocked.
            guard let followee = order.followee else { return nil }
            let target = try connection.query("SELECT uri FROM remote_actors WHERE user_id = \(followee)").first
            guard let target else { return nil }
            let (type, path) = [.follow, .undoFollow].contains(order.kind) ? ("Follow", "follows") : ("Block", "blocks")
            let original = envelope(type, id: "\(actorID)#\(path)/\(followee)", object: try target.decode("uri", as: String.self))
            let activity = [.follow, .block].contains(order.kind) ? original
                : envelope("Undo", id: "\(actorID)#\(path)/\(followee)/undo/\(stamp)", object: original)
            return OutgoingActivity(actor: order.actor, json: activity, recipients: "SELECT \(followee)::bigint")
        case .acceptFollow:
            // `actor` accepts the follow of `followee` (the remote follower), whose Follow it names.
            guard let follower = order.followee, let followID = order.remoteActivity else { return nil }
            let target = try connection.query("SELECT uri FROM remote_actors WHERE user_id = \(follower)").first
            guard let target else { return nil }
            let follow: [String: Any] = ["id": followID, "type": "Follow", "actor": try target.decode("uri", as: String.self),
                                         "object": actorID]
            let activity = envelope("Accept", id: "\(actorID)#accepts/\(follower)/\(stamp)", object: follow)
            return OutgoingActivity(actor: order.actor, json: activity, recipients: "SELECT \(follower)::bigint")
        }
    }

    /// A Note's `cc` with the remote people it mentions (each is told).
    private static func audience(of note: [String: Any]) -> [String] {
        let mentioned = (note["tag"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "Mention" }.compactMap { $0["href"] as? String }
        return (note["cc"] as? [String] ?? []) + mentioned
    }

    /// The users a `mentions` column (from `source`, one row) names.
    private static func mentioned(_ source: SQLQuery) -> SQLQuery {
        "SELECT (m->>'user_id')::bigint FROM (\(source)) s, json_array_elements(s.mentions) m"
    }
}
