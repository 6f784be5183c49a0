import Foundation
import Postgres

/// What an activity from another server does here (API.md "In"), each through the same
/// services as a request of ours, so the write path and the visibility policy apply to a
/// remote actor as to anyone (a block refuses its like, a mute hides its comment):
/// `Follow` (stored and `Accept`ed), `Undo` of a follow or a like, `Accept`/`Reject` of our
/// follow, `Create` of a `Note` (a reply → a comment; a post of an account someone here
/// follows → a post), `Like`, `Delete` of a Note or of the actor, `Update` of the actor or
/// of a Note that is a post here.
/// Each runs in one transaction whose last write records the activity's id: delivered
/// twice, it is applied once.
struct InboxActivities: Sendable {
    let pool: ConnectionPool
    let actors: RemoteActors
    let urls: FederationURLs
    let clock: ServerClock
    let follows: FollowService
    let likes: LikeService
    let comments: CommentService
    let posts: PostService
    /// A remote account's `Delete` of itself: gone as an account here goes.
    let deletion: AccountDeletion

    enum Outcome: Equatable {
        case applied
        case duplicate
        /// Understood, and nothing to do (an activity of a kind we do not act on, about
        /// something we do not have).
        case ignored
    }

    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    /// Applies `activity`, signed by `signer` (the caller checked the signature).
    func apply(_ activity: [String: Any], from signer: RemoteActors.Actor) throws -> Outcome {
        guard let id = activity["id"] as? String, RemoteActorDocument.domain(of: id) == signer.domain else {
            throw Malformed(description: "the activity has no id on its actor's host")
        }
        guard let type = activity["type"] as? String else { throw Malformed(description: "the activity has no type") }
        if type == "Update", let object = activity["object"] as? [String: Any], Self.id(object) == signer.uri {
            _ = try actors.refreshed(signer.uri)
            return .applied
        }
        // Its own transaction (a large account's follows go by a job), and applied once anyway.
        if type == "Delete", Self.id(activity["object"]) == signer.uri {
            try deletion.delete(signer.userID)
            return .applied
        }
        let remote = try remoteCaller(signer)
        do {
            return try pool.withTransaction { connection in
                try apply(activity, type: type, id: id, remote: remote, signer: signer, on: connection)
            }
        } catch is Duplicate {
            return .duplicate
        }
    }

    private func apply(_ activity: [String: Any], type: String, id: String, remote: Caller, signer: RemoteActors.Actor,
                       on connection: PostgresConnection) throws -> Outcome {
        guard try alreadyApplied(id, on: connection) == false else { return .duplicate }
        let outcome: Outcome
        do {
            switch type {
            case "Follow": outcome = try follow(activity, id: id, by: remote, on: connection)
            case "Undo": outcome = try undo(activity, by: remote, signer: signer, on: connection)
            case "Accept", "Reject": outcome = try answer(activity, accepted: type == "Accept", signer: signer, on: connection)
            case "Create": outcome = try create(activity, by: remote, signer: signer, on: connection)
            case "Like": outcome = try like(activity, by: remote, on: connection)
            case "Delete": outcome = try delete(activity, by: remote, signer: signer, on: connection)
            case "Update": outcome = try update(activity, by: remote, signer: signer, on: connection)
            default: outcome = .ignored
            }
        } catch let refusal as APIError where Self.refusalsIgnored.contains(refusal.reason) {
            // What it is about is gone, or the policy refuses it (a block): nothing was written.
            return .ignored
        }
        guard outcome == .applied else { return outcome }
        // Last: a second delivery of it in flight waits here, and then finds it.
        let recorded = try connection.query("""
            INSERT INTO inbox_activities (id, received_at) VALUES (\(id), \(clock.now)) ON CONFLICT DO NOTHING
            """).affectedRows
        guard recorded == 1 else { throw Duplicate() }
        return .applied
    }

    private struct Duplicate: Error {}

    /// The services' refusals that leave an activity without effect rather than failing it
    /// (a retry would find the same): no such object, a block, a tombstone, a rule.
    private static let refusalsIgnored: [APIError.Reason] = [.notFound, .forbidden, .gone, .invalid]

    private func alreadyApplied(_ id: String, on connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT 1 FROM inbox_activities WHERE id = \(id)").rowCount > 0
    }

    /// The remote actor as a caller, with its blocks and mutes.
    private func remoteCaller(_ actor: RemoteActors.Actor) throws -> Caller {
        try pool.withConnection { Caller(userID: actor.userID, tokenID: nil, relations: try Relations.read(of: actor.userID, on: $0)) }
    }

    // MARK: Follows

    private func follow(_ activity: [String: Any], id: String, by remote: Caller,
                        on connection: PostgresConnection) throws -> Outcome {
        guard case .actor(let local)? = Self.id(activity["object"]).flatMap(urls.local) else { return .ignored }
        _ = try follows.set(following: true, user: local, by: remote, on: connection)
        try connection.query("""
            INSERT INTO jobs (kind, payload, run_at, created_at)
            VALUES (\(JobKind.federationPublish.name),
                    \(JobPayload.federationPublish(kind: "\(OutgoingActivity.Kind.acceptFollow.rawValue)::text", actor: "\(local)::bigint",
                                                   followee: "\(remote.userID)::bigint", remoteActivity: "\(id)::text")),
                    \(clock.now), \(clock.now))
            """)
        connection.onCommit(follows.effects.jobs.wake)
        return .applied
    }

    private func undo(_ activity: [String: Any], by remote: Caller, signer: RemoteActors.Actor,
                      on connection: PostgresConnection) throws -> Outcome {
        guard let object = activity["object"] as? [String: Any] else { return .ignored }
        if let actor = Self.id(object["actor"]), actor != signer.uri { throw Malformed(description: "an Undo of another actor's activity") }
        switch object["type"] as? String {
        case "Follow":
            guard case .actor(let local)? = Self.id(object["object"]).flatMap(urls.local) else { return .ignored }
            _ = try follows.set(following: false, user: local, by: remote, on: connection)
            return .applied
        case "Like":
            guard case .post(let post)? = Self.id(object["object"]).flatMap(urls.local) else { return .ignored }
            _ = try likes.apply(.unlike, post: post, by: remote, on: connection)
            return .applied
        default:
            return .ignored
        }
    }

    /// The remote account's answer to our follow: followed from now on, or not.
    private func answer(_ activity: [String: Any], accepted: Bool, signer: RemoteActors.Actor,
                        on connection: PostgresConnection) throws -> Outcome {
        let follow = activity["object"] as? [String: Any]
        // Mastodon names our Follow by its id; its actor is ours (the id says whose).
        let followID = Self.id(activity["object"]) ?? ""
        let localActor = Self.id(follow?["actor"]) ?? String(followID.split(separator: "#").first ?? "")
        guard case .actor(let local)? = urls.local(localActor) else { return .ignored }
        let pending = try connection.query("""
            SELECT 1 FROM follow_requests WHERE follower_id = \(local) AND followee_id = \(signer.userID)
            """).rowCount > 0
        guard pending else { return .ignored }
        // The follow first: its locks come before the transaction's first write (`ChangeLog`).
        if accepted {
            let caller = Caller(userID: local, tokenID: nil, relations: try Relations.read(of: local, on: connection))
            _ = try? follows.set(following: true, user: signer.userID, by: caller, on: connection)
        }
        try connection.query("DELETE FROM follow_requests WHERE follower_id = \(local) AND followee_id = \(signer.userID)")
        return .applied
    }

    // MARK: Likes

    private func like(_ activity: [String: Any], by remote: Caller, on connection: PostgresConnection) throws -> Outcome {
        guard case .post(let post)? = Self.id(activity["object"]).flatMap(urls.local) else { return .ignored }
        guard try !silenced(remote, towardAuthorOf: post, on: connection) else { return .ignored }
        _ = try likes.apply(.like, post: post, by: remote, on: connection)
        return .applied
    }

    // MARK: Notes

    private func create(_ activity: [String: Any], by remote: Caller, signer: RemoteActors.Actor,
                        on connection: PostgresConnection) throws -> Outcome {
        guard let note = activity["object"] as? [String: Any], ["Note", "Article", "Page"].contains(note["type"] as? String ?? "") else {
            return .ignored
        }
        guard let uri = note["id"] as? String, RemoteActorDocument.domain(of: uri) == signer.domain,
              Self.id(note["attributedTo"]) == signer.uri else {
            throw Malformed(description: "a Create of an object that is not its actor's")
        }
        guard try connection.query("SELECT 1 FROM remote_objects WHERE uri = \(uri)").rowCount == 0 else { return .ignored }
        var made: (post: Int64?, comment: UUID?)
        if let inReplyTo = Self.id(note["inReplyTo"]) {
            guard let place = try place(of: inReplyTo, on: connection),
                  try !silenced(remote, towardAuthorOf: place.post, on: connection) else { return .ignored }
            let texts = Self.postTexts(of: note)
            let body = String((texts.summary.isEmpty ? texts.body : "\(texts.summary)\n\n\(texts.body)").prefix(CommentService.maxLength))
            let json = try comments.add(body.isEmpty ? "…" : body, to: place.post, replyTo: place.comment, by: remote, on: connection)
            made.comment = Self.commentID(in: json)
        } else {
            // A post of an account no one here follows is of no one's feed.
            let followed = try connection.query("SELECT 1 FROM follows WHERE followee_id = \(signer.userID) LIMIT 1").rowCount > 0
            guard followed else { return .ignored }
            let texts = Self.postTexts(of: note)
            let draft = PostDraft(title: texts.title, summary: texts.summary, body: texts.body, parentID: nil)
            made.post = Self.postID(in: try posts.create(draft, by: remote, on: connection))
        }
        try connection.query("""
            INSERT INTO remote_objects (uri, actor_id, post_id, comment_id) VALUES (\(uri), \(signer.userID), \(made.post), \(made.comment))
            """)
        return .applied
    }

    /// Whether the actor's domain is silenced here and the post's author does not follow it
    /// (then its reply or like does not reach them: `DomainBlocks`).
    private func silenced(_ remote: Caller, towardAuthorOf post: Int64, on connection: PostgresConnection) throws -> Bool {
        try connection.query("""
            SELECT 1 FROM remote_actors ra JOIN domain_blocks b ON b.domain = ra.domain AND b.action = 'silence'
            WHERE ra.user_id = \(remote.userID) AND NOT EXISTS (
                SELECT 1 FROM posts p JOIN follows f ON f.follower_id = p.user_id AND f.followee_id = ra.user_id WHERE p.id = \(post))
            """).rowCount > 0
    }

    /// API.md "In": a post's `title` is the Note's `name` or its first line, cut at 200
    /// characters; its `summary` the content warning or empty; its `body` the text.
    static func postTexts(of note: [String: Any]) -> (title: String, summary: String, body: String) {
        let text = NoteContent.plainText(fromHTML: note["content"] as? String ?? "")
        let warning = (note["summary"] as? String).map { NoteContent.plainText(fromHTML: $0) } ?? ""
        let name = (note["name"] as? String).map { NoteContent.plainText(fromHTML: $0) } ?? ""
        let firstLine = text.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? ""
        let title = String((name.isEmpty ? firstLine : name).prefix(PostText.maxTitle))
        return (title.isEmpty ? "…" : title, String(warning.prefix(PostText.maxSummary)), String(text.prefix(PostText.maxBody)))
    }

    /// An `Update` of a Note of the actor's that is a post here: its texts, edited.
    private func update(_ activity: [String: Any], by remote: Caller, signer: RemoteActors.Actor,
                        on connection: PostgresConnection) throws -> Outcome {
        guard let note = activity["object"] as? [String: Any], let uri = note["id"] as? String,
              Self.id(note["attributedTo"]) == signer.uri else { return .ignored }
        let row = try connection.query("""
            SELECT post_id FROM remote_objects WHERE uri = \(uri) AND actor_id = \(signer.userID) AND post_id IS NOT NULL
            """).first
        guard let post = try row?.decode("post_id", as: Int64.self) else { return .ignored }
        let texts = Self.postTexts(of: note)
        _ = try posts.update(post, with: PostEdits(title: texts.title, summary: texts.summary, body: texts.body), by: remote, on: connection)
        return .applied
    }

    /// Where a reply to `uri` goes: a post (a comment on it) or a comment (a reply in its thread).
    private func place(of uri: String, on connection: PostgresConnection) throws -> (post: Int64, comment: UUID?)? {
        switch urls.local(uri) {
        case .post(let post)?: return (post, nil)
        case .comment(let comment)?:
            let row = try connection.query("SELECT post_id FROM comments WHERE id = \(comment)").first
            return try row.map { (try $0.decode("post_id"), comment) }
        case .actor?: return nil
        case nil:
            let row = try connection.query("""
                SELECT coalesce(o.post_id, c.post_id) AS post_id, o.comment_id
                FROM remote_objects o LEFT JOIN comments c ON c.id = o.comment_id WHERE o.uri = \(uri)
                """).first
            guard let row, let post = try row.decode("post_id", as: Int64?.self) else { return nil }
            return (post, try row.decode("comment_id", as: UUID?.self))
        }
    }

    private func delete(_ activity: [String: Any], by remote: Caller, signer: RemoteActors.Actor,
                        on connection: PostgresConnection) throws -> Outcome {
        guard let object = Self.id(activity["object"]) else { return .ignored }
        let row = try connection.query("""
            SELECT post_id, comment_id FROM remote_objects WHERE uri = \(object) AND actor_id = \(signer.userID)
            """).first
        guard let row else { return .ignored }
        if let post = try row.decode("post_id", as: Int64?.self) {
            try posts.deleteSubtree(post, by: remote, checkingOwner: true, on: connection)
        } else if let comment = try row.decode("comment_id", as: UUID?.self) {
            _ = try comments.delete(comment, by: remote, on: connection)
        }
        return .applied
    }

    // MARK: Reading JSON-LD as Mastodon sends it

    /// An object's id: the string itself, or an object's `id`.
    static func id(_ value: Any?) -> String? {
        switch value {
        case let text as String: text
        case let object as [String: Any]: object["id"] as? String
        default: nil
        }
    }

    private static func commentID(in json: [UInt8]) -> UUID? {
        ((try? JSONSerialization.jsonObject(with: Data(json))) as? [String: Any])?["id"].flatMap { $0 as? String }.flatMap(UUID.init(uuidString:))
    }

    private static func postID(in json: [UInt8]) -> Int64? {
        (((try? JSONSerialization.jsonObject(with: Data(json))) as? [String: Any])?["id"] as? NSNumber)?.int64Value
    }
}
