import Foundation
import Postgres

/// Other servers' actors as users here (API.md "Remote people"): found by key id (an
/// inbox request's signer), by id, or by `user@domain` through WebFinger; fetched with the
/// instance actor's signature, checked (`RemoteActorDocument`) and stored as a user with a
/// profile (`acct`, username `user@domain`) and a `remote_actors` row. A key is fetched
/// again at most once a minute per actor (rotation). Nothing of a blocked domain is stored.
struct RemoteActors: Sendable {
    let pool: ConnectionPool
    let clients: FederationClients
    let keys: ActorKeys
    let urls: FederationURLs
    let settings: FederationSettings
    let clock: ServerClock
    static let keyRefetchSeconds: Int64 = 60

    struct Actor: Sendable {
        let userID: Int64
        let uri: String
        let domain: String
        let keyID: String
        let publicKeyPEM: String
        /// Whether its key may be fetched again now (its last fetch is a minute old).
        let keyMayBeRefetched: Bool
        /// A moderator here suspended the account: nothing it sends is applied.
        var suspended = false
    }

    enum Failure: Error, CustomStringConvertible {
        case blocked(String)
        case unusable(String)
        case unreachable(String)

        var description: String {
            switch self {
            case .blocked(let domain): "\(domain) is blocked here"
            case .unusable(let why): why
            case .unreachable(let why): why
            }
        }
    }

    /// The actor whose key `keyID` is, fetched if unknown.
    func actor(byKeyID keyID: String) throws -> Actor {
        if let known = try stored("ra.key_id = \(keyID)") { return known }
        let actorURL = String(keyID.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
        if let known = try stored("ra.uri = \(actorURL)") { return known }
        return try fetchAndStore(actorURL)
    }

    /// The actor with this id, fetched if unknown.
    func actor(byURI uri: String) throws -> Actor {
        if let known = try stored("ra.uri = \(uri)") { return known }
        return try fetchAndStore(uri)
    }

    /// The actor fetched again (its key rotated): only when its last fetch is a minute old.
    func refetched(_ actor: Actor) throws -> Actor? {
        guard actor.keyMayBeRefetched else { return nil }
        return try fetchAndStore(actor.uri)
    }

    /// The actor fetched again whatever its age (its `Update`).
    func refreshed(_ uri: String) throws -> Actor {
        try fetchAndStore(uri)
    }

    /// `user@domain` through the domain's WebFinger (`https://` first; `http://` too when
    /// private addresses are allowed), then its actor.
    func resolve(acct: String) throws -> Actor {
        let parts = acct.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
              let domain = RemoteActorDocument.domain(of: "https://\(parts[1])") else {
            throw Failure.unusable("\(acct) is not user@domain")
        }
        if let known = try stored("lower(pr.acct) = lower(\(acct))") { return known }
        try refuseBlocked(domain)
        let resource = "acct:\(parts[0])@\(parts[1])".addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(["&", "+", "="])) ?? ""
        var lastFailure = "no WebFinger answer from \(domain)"
        for scheme in settings.allowPrivate ? ["https", "http"] : ["https"] {
            let url = "\(scheme)://\(domain)/.well-known/webfinger?resource=\(resource)"
            do {
                let (body, _) = try clients.with { try $0.fetch(url, signer: try instanceSigner(), accept: "application/jrd+json, application/json") }
                let jrd = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
                let links = jrd["links"] as? [[String: Any]] ?? []
                guard let link = links.first(where: { $0["rel"] as? String == "self" && ActivityPub.names($0["type"] as? String) }),
                      let href = link["href"] as? String else {
                    throw Failure.unusable("\(acct)'s WebFinger names no ActivityPub actor")
                }
                return try actor(byURI: href)
            } catch let failure as FederationClient.FetchFailure {
                switch failure {
                case .notFound, .gone: throw Failure.unusable("\(acct) does not exist")
                case .refused(let why): throw Failure.unusable("\(acct) cannot be fetched: \(why)")
                case .failed: lastFailure = "\(domain): \(failure)"
                }
            }
        }
        throw Failure.unreachable(lastFailure)
    }

    func instanceSigner() throws -> FederationClient.Signer {
        FederationClient.Signer(keyID: urls.instanceKeyID, privateKeyPEM: try keys.key(of: nil).privateKeyPEM)
    }

    private func refuseBlocked(_ domain: String) throws {
        let blocked = try pool.withConnection { connection in
            try connection.query("SELECT 1 FROM domain_blocks WHERE domain = \(domain) AND action = 'block'").rowCount > 0
        }
        if blocked { throw Failure.blocked(domain) }
    }

    private func fetchAndStore(_ url: String) throws -> Actor {
        guard let domain = RemoteActorDocument.domain(of: url) else { throw Failure.unusable("\(url) is not an http(s) URL") }
        guard domain != urls.domain else { throw Failure.unusable("\(url) is one of ours") }
        try refuseBlocked(domain)
        let fetched: (body: [UInt8], url: String)
        do {
            fetched = try clients.with { try $0.fetch(url, signer: try instanceSigner()) }
        } catch let failure as FederationClient.FetchFailure {
            throw Failure.unreachable("\(url): \(failure)")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(fetched.body))) as? [String: Any] else {
            throw Failure.unusable("\(url) is not a JSON object")
        }
        let document: RemoteActorDocument
        do {
            document = try RemoteActorDocument(json: object, fetchedFrom: fetched.url)
        } catch {
            throw Failure.unusable(error.description)
        }
        try store(document)
        guard let actor = try stored("ra.uri = \(document.uri)") else { throw Failure.unusable("\(url) could not be stored") }
        return actor
    }

    /// Inserts or updates the actor's user, profile and `remote_actors` row in one transaction.
    private func store(_ actor: RemoteActorDocument) throws {
        let now = clock.now
        try pool.withTransaction { connection in
            let user: Int64 = try connection.query("""
                INSERT INTO users (email, created_at) VALUES (encode(sha256(convert_to(\(actor.uri), 'UTF8')), 'hex') || \("@" + EmailAddress.remoteAccountsDomain), \(now))
                ON CONFLICT (email) DO UPDATE SET email = excluded.email RETURNING id
                """).firstRow().decode("id")
            // The acct moved to this id from an older one (an actor that moved): the old gives it up.
            try connection.query("""
                UPDATE profiles SET username = username || '~' || user_id, acct = acct || '~' || user_id
                WHERE lower(username) = lower(\(actor.acct)) AND user_id <> \(user)
                """)
            try connection.query("""
                INSERT INTO profiles (user_id, username, full_name, bio, avatar_url, acct, created_at)
                VALUES (\(user), \(actor.acct), \(actor.name), \(actor.summary), \(actor.iconURL), \(actor.acct), \(now))
                ON CONFLICT (user_id) DO UPDATE SET username = excluded.username, full_name = excluded.full_name,
                    bio = excluded.bio, avatar_url = excluded.avatar_url, acct = excluded.acct
                """)
            try connection.query("""
                INSERT INTO remote_actors (user_id, uri, domain, inbox, shared_inbox, followers_uri, url, key_id, public_key_pem,
                                           fetched_at, key_fetched_at)
                VALUES (\(user), \(actor.uri), \(actor.domain), \(actor.inbox), \(actor.sharedInbox), \(actor.followers), \(actor.url),
                        \(actor.keyID), \(actor.publicKeyPEM), \(now), \(now))
                ON CONFLICT (user_id) DO UPDATE SET domain = excluded.domain, inbox = excluded.inbox,
                    shared_inbox = excluded.shared_inbox, followers_uri = excluded.followers_uri, url = excluded.url,
                    key_id = excluded.key_id, public_key_pem = excluded.public_key_pem, fetched_at = excluded.fetched_at,
                    key_fetched_at = excluded.key_fetched_at
                """)
        }
    }

    /// The stored actor the condition names; of a domain blocked since it was stored, none.
    private func stored(_ condition: SQLQuery) throws -> Actor? {
        try pool.withConnection { connection in
            let row = try connection.query("""
                SELECT ra.user_id, ra.uri, ra.domain, ra.key_id, ra.public_key_pem,
                       ra.key_fetched_at < \(clock.now) - make_interval(secs => \(Double(Self.keyRefetchSeconds))) AS stale,
                       EXISTS (SELECT 1 FROM domain_blocks b WHERE b.domain = ra.domain AND b.action = 'block') AS blocked,
                       pr.suspended
                FROM remote_actors ra JOIN profiles pr ON pr.user_id = ra.user_id
                WHERE \(condition)
                """).first
            if let row, try row.decode("blocked", as: Bool.self) { throw Failure.blocked(try row.decode("domain")) }
            return try row.map { row in
                Actor(userID: try row.decode("user_id"), uri: try row.decode("uri"), domain: try row.decode("domain"),
                      keyID: try row.decode("key_id"), publicKeyPEM: try row.decode("public_key_pem"),
                      keyMayBeRefetched: try row.decode("stale"), suspended: try row.decode("suspended"))
            }
        }
    }
}
