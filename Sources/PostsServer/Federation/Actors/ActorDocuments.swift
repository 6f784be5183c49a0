import Foundation
import Postgres

/// Our users as ActivityPub actors (API.md "Actors"): a `Person` with its key, inbox,
/// outbox and collections; and the instance actor, an `Application` that signs the
/// instance's own fetches. A remote account, a suspended one or the reserved user is none.
struct ActorDocuments: Sendable {
    let pool: ConnectionPool
    let keys: ActorKeys
    let urls: FederationURLs

    enum Lookup: Sendable {
        case id(Int64)
        case username(String)
    }

    /// The user's id, if it is one of our actors.
    func userID(_ lookup: Lookup) throws -> Int64? {
        try row(lookup).map { try $0.decode("user_id") }
    }

    func person(_ lookup: Lookup) throws -> [String: Any]? {
        guard let row = try row(lookup) else { return nil }
        let user: Int64 = try row.decode("user_id")
        let username: String = try row.decode("username")
        let key = try keys.key(of: user)
        var person: [String: Any] = [
            "id": urls.actor(user), "type": "Person", "preferredUsername": username,
            "name": try row.decode("full_name", as: String.self),
            "summary": NoteContent.html(paragraphs: [try row.decode("bio", as: String.self)]),
            "url": urls.profilePage(username),
            "inbox": urls.inbox(user), "outbox": urls.outbox(user),
            "followers": urls.followers(user), "following": urls.following(user),
            "endpoints": ["sharedInbox": urls.sharedInbox],
            "manuallyApprovesFollowers": false, "discoverable": true,
            "published": Timestamp.format(try row.decode("created_at", as: Date.self)),
            "publicKey": ["id": urls.keyID(user), "owner": urls.actor(user), "publicKeyPem": key.publicKeyPEM],
        ]
        if let avatar = try row.decode("avatar_url", as: String?.self) {
            let absolute = avatar.hasPrefix("/") ? urls.origin + avatar : avatar
            person["icon"] = ["type": "Image", "mediaType": NoteContent.mediaType(ofImage: absolute), "url": absolute]
        }
        return person
    }

    /// The instance actor: who signs what the instance fetches (servers in Mastodon's
    /// secure mode answer only signed fetches).
    func instanceActor(domain: String) throws -> [String: Any] {
        let key = try keys.key(of: nil)
        return [
            "id": urls.instanceActor, "type": "Application", "preferredUsername": domain,
            "inbox": urls.sharedInbox, "outbox": urls.instanceActor + "/outbox",
            "endpoints": ["sharedInbox": urls.sharedInbox], "manuallyApprovesFollowers": true,
            "publicKey": ["id": urls.instanceKeyID, "owner": urls.instanceActor, "publicKeyPem": key.publicKeyPEM],
        ]
    }

    private func row(_ lookup: Lookup) throws -> PostgresRow? {
        let condition: SQLQuery = switch lookup {
        case .id(let id): "pr.user_id = \(id)"
        case .username(let name): "lower(pr.username) = lower(\(name))"
        }
        return try pool.withReadConnection { connection in
            try connection.query("""
                SELECT pr.user_id, pr.username, pr.full_name, pr.bio, pr.avatar_url, pr.created_at FROM profiles pr
                WHERE \(condition) AND pr.acct IS NULL AND NOT pr.suspended AND lower(pr.username) <> \(ReservedUser.username)
                """).first
        }
    }
}
