import HTTP
import Postgres

/// API.md "Discovery": WebFinger (`acct:user@domain` or an actor's id → a JRD whose `self`
/// link is the actor), host-meta (where WebFinger is) and NodeInfo 2.1.
enum DiscoveryRoutes {
    static func register(on routes: inout RouteTable, actors: ActorDocuments, settings: FederationSettings, pool: ConnectionPool) {
        let urls = actors.urls
        routes.get("/.well-known/webfinger", access: .open) { request, _ in
            guard let resource = request.query["resource"], !resource.isEmpty else {
                throw APIError.malformed("resource is required: acct:user@\(settings.domain)")
            }
            guard let user = try webFingerUser(resource, actors: actors, settings: settings) else {
                throw APIError.notFound("no such account here")
            }
            guard let person = try actors.person(.id(user)), let username = person["preferredUsername"] as? String else {
                throw APIError.notFound("no such account here")
            }
            let jrd: [String: Any] = [
                "subject": "acct:\(username)@\(settings.domain)",
                "aliases": [urls.actor(user), urls.profilePage(username)],
                "links": [
                    ["rel": "self", "type": "application/activity+json", "href": urls.actor(user)],
                    ["rel": "http://webfinger.net/rel/profile-page", "type": "text/html", "href": urls.profilePage(username)],
                ],
            ]
            return Response(headers: HTTPHeaders([("Content-Type", "application/jrd+json; charset=utf-8"),
                                                  ("Access-Control-Allow-Origin", "*")]),
                            body: ActivityPub.encode(jrd))
        }

        let hostMeta = """
            <?xml version="1.0" encoding="UTF-8"?>
            <XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">
              <Link rel="lrdd" template="\(settings.origin)/.well-known/webfinger?resource={uri}"/>
            </XRD>

            """
        routes.get("/.well-known/host-meta", access: .open, runsOnEventLoop: true) { _, _ in
            Response(headers: HTTPHeaders([("Content-Type", "application/xrd+xml; charset=utf-8")]), body: Array(hostMeta.utf8))
        }

        let nodeInfoLinks = ActivityPub.encode(["links": [[
            "rel": "http://nodeinfo.diaspora.software/ns/schema/2.1", "href": "\(settings.origin)/nodeinfo/2.1",
        ]]])
        routes.get("/.well-known/nodeinfo", access: .open, runsOnEventLoop: true) { _, _ in
            Response.json(nodeInfoLinks)
        }
        routes.get("/nodeinfo/2.1", access: .open) { _, _ in
            let usage = try pool.withReadConnection { connection in
                try connection.query("""
                    SELECT (SELECT count(*) FROM profiles WHERE acct IS NULL) AS users,
                           (SELECT count(*) FROM posts p WHERE NOT p.deleted
                              AND NOT EXISTS (SELECT 1 FROM remote_objects o WHERE o.post_id = p.id)) AS posts
                    """).firstRow()
            }
            let document: [String: Any] = [
                "version": "2.1",
                "software": ["name": "posts-server", "version": ServerVersion.current],
                "protocols": ["activitypub"],
                "services": ["inbound": [String](), "outbound": [String]()],
                "openRegistrations": true,
                "usage": ["users": ["total": try usage.decode("users", as: Int64.self)],
                          "localPosts": try usage.decode("posts", as: Int64.self)],
                "metadata": [String: Any](),
            ]
            let profile = "application/json; profile=\"http://nodeinfo.diaspora.software/ns/schema/2.1#\""
            return Response(headers: HTTPHeaders([("Content-Type", profile)]), body: ActivityPub.encode(document))
        }
    }

    /// The user a WebFinger resource names: `acct:user@<our domain>` (the `acct:` may be
    /// left out), or one of our actors' ids or profile pages.
    static func webFingerUser(_ resource: String, actors: ActorDocuments, settings: FederationSettings) throws -> Int64? {
        if case .actor(let id)? = actors.urls.local(resource) { return try actors.userID(.id(id)) }
        if resource.hasPrefix(settings.origin + "/users/") {
            return try actors.userID(.username(String(resource.dropFirst(settings.origin.count + "/users/".count))))
        }
        var account = Substring(resource)
        if account.lowercased().hasPrefix("acct:") { account = account.dropFirst(5) }
        if account.hasPrefix("@") { account = account.dropFirst() }
        guard let at = account.lastIndex(of: "@"), account[account.index(after: at)...].lowercased() == settings.domain else {
            return nil
        }
        let name = account[..<at]
        guard !name.isEmpty, name.count <= Username.lengths.upperBound else { return nil }
        return try actors.userID(.username(String(name)))
    }
}
