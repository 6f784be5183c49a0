import Foundation
import HTTP
@testable import PostsServer
import Synchronization
import Testing
import TestSupport

/// API.md "In": what another server sends is checked before anything is stored — unsigned,
/// forged, replayed, oversized, malformed, signed by a key that is not the actor's, a
/// Create of another's object: refused, nothing stored. A rotated key is fetched again,
/// at most once a minute. (The remote actor here is served by the test, its requests
/// signed with `RequestSigning`; the independent implementation is `FederationPeerTests`.)
@Suite struct FederationInboxTests {
    /// A remote actor: its document served on a port of its own, its key in hand.
    final class RemoteActor: Sendable {
        let server: Server
        private let key = Mutex<(privateKeyPEM: String, publicKeyPEM: String)>(("", ""))
        let fetches = Atomic<Int>(0)

        init() throws {
            let pair = try RequestSigning.makeKeyPair()
            key.withLock { $0 = pair }
            let holder = Mutex<RemoteActor?>(nil)
            server = try TestHTTPServer.start { router in
                router.get("/users/mallory") { _, _ in
                    guard let actor = holder.withLock({ $0 }) else { return Response(status: .notFound) }
                    actor.fetches.add(1, ordering: .relaxed)
                    return Response(headers: HTTPHeaders([("Content-Type", "application/activity+json")]),
                                    body: ActivityPub.encode(actor.document))
                }
            }
            holder.withLock { $0 = self }
        }

        var origin: String { "http://127.0.0.1:\(server.port)" }
        var id: String { "\(origin)/users/mallory" }
        var privateKeyPEM: String { key.withLock { $0.privateKeyPEM } }

        var document: [String: Any] {
            ["id": id, "type": "Person", "preferredUsername": "mallory", "inbox": "\(id)/inbox",
             "publicKey": ["id": "\(id)#main-key", "owner": id, "publicKeyPem": key.withLock { $0.publicKeyPEM }]]
        }

        func rotate() throws {
            let pair = try RequestSigning.makeKeyPair()
            key.withLock { $0 = pair }
        }

        /// The headers of a POST of `body` to `path`, signed with `privateKey` (the actor's by default).
        func signedHeaders(path: String, body: [UInt8], privateKey: String? = nil, at time: Int64 = Int64(Date().timeIntervalSince1970),
                           keyID: String? = nil) throws -> [String: String] {
            let headers = try RequestSigning.headers(method: "post", target: path, host: "localhost", body: body,
                                                     keyID: keyID ?? "\(id)#main-key", privateKeyPEM: privateKey ?? privateKeyPEM,
                                                     now: time)
            return Dictionary(headers.map { ($0.0, $0.1) }, uniquingKeysWith: { $1 })
        }

        func activity(_ type: String, object: Any, id: String? = nil) -> [UInt8] {
            ActivityPub.encode(["id": id ?? "\(origin)/activities/\(UUID().uuidString)", "type": type, "actor": self.id, "object": object])
        }
    }

    static func post(_ body: [UInt8], to app: Application, path: String = "/inbox", headers: [String: String]) throws -> RawHTTPClient.Response {
        try APIClient(port: app.server.port).send("POST", path, body: body, contentType: "application/activity+json", headers: headers)
    }

    /// A user of `app` and its actor's id.
    static func local(_ email: String, on app: Application) throws -> (APIClient, String) {
        let client = try APIClient.user(email, on: app)
        return (client, "http://\(FederatedInstance.domain(of: app))/ap/users/\(try client.userID())")
    }

    static func count(_ table: String, in app: Application) throws -> Int {
        try app.pool.withConnection { try $0.query("SELECT count(*)::int AS n FROM \(unsafeSQL: table)").firstRow().decode("n") }
    }

    @Test func badRequests_areRefused_andNothingIsStored() throws {
        let app = try FederatedInstance.start()
        defer { app.stop() }
        let mallory = try RemoteActor()
        defer { mallory.server.stop() }
        let (ash, ashActor) = try Self.local("ash@example.com", on: app)
        let follow = mallory.activity("Follow", object: ashActor)

        // Unsigned.
        let unsigned = try Self.post(follow, to: app, headers: [:])
        #expect(unsigned.status == 401 && unsigned.json["error"] as? String == "unauthorized", "\(unsigned.text)")
        // Signed by another key under the actor's key id.
        let stranger = try RequestSigning.makeKeyPair()
        #expect(try Self.post(follow, to: app, headers: mallory.signedHeaders(path: "/inbox", body: follow, privateKey: stranger.privateKeyPEM)).status == 401)
        // A body other than the one signed (the digest is the signed body's).
        var headers = try mallory.signedHeaders(path: "/inbox", body: follow)
        let other = mallory.activity("Follow", object: ashActor)
        #expect(try Self.post(other, to: app, headers: headers).status == 401)
        // Replayed two hours later (the Date is outside the hour).
        headers = try mallory.signedHeaders(path: "/inbox", body: follow, at: Int64(Date().timeIntervalSince1970) - 7200)
        #expect(try Self.post(follow, to: app, headers: headers).status == 401)
        // Signed for another inbox.
        headers = try mallory.signedHeaders(path: "/users/someone/inbox", body: follow)
        #expect(try Self.post(follow, to: app, headers: headers).status == 401)
        // Malformed JSON, validly signed.
        let garbage = Array("{\"type\": \"Follow\", ".utf8)
        #expect(try Self.post(garbage, to: app, headers: mallory.signedHeaders(path: "/inbox", body: garbage)).status == 400)
        // An activity whose actor is not its signer.
        let impostor = ActivityPub.encode(["id": "\(mallory.origin)/a/1", "type": "Follow", "actor": "\(mallory.origin)/users/alice", "object": ashActor])
        #expect(try Self.post(impostor, to: app, headers: mallory.signedHeaders(path: "/inbox", body: impostor)).status == 401)
        // A Create of a note attributed to someone else.
        let forgedNote = mallory.activity("Create", object: ["id": "\(mallory.origin)/notes/1", "type": "Note",
                                                             "attributedTo": "\(mallory.origin)/users/alice", "content": "x",
                                                             "inReplyTo": ashActor])
        #expect(try Self.post(forgedNote, to: app, headers: mallory.signedHeaders(path: "/inbox", body: forgedNote)).status == 400)
        // Over 1 MiB.
        let huge = Array(repeating: UInt8(ascii: " "), count: (1 << 20) + 1)
        #expect(try Self.post(huge, to: app, headers: mallory.signedHeaders(path: "/inbox", body: huge)).status == 413)

        #expect(try Self.count("follows", in: app) == 0)
        #expect(try Self.count("inbox_activities", in: app) == 0)
        #expect(try Self.count("comments", in: app) == 0)

        // The same follow, signed as it should be: accepted once, however often delivered.
        headers = try mallory.signedHeaders(path: "/inbox", body: follow)
        #expect(try Self.post(follow, to: app, headers: headers).status == 202)
        #expect(try Self.post(follow, to: app, headers: mallory.signedHeaders(path: "/inbox", body: follow)).status == 202)
        #expect(try Self.count("follows", in: app) == 1)
        #expect(try Self.count("inbox_activities", in: app) == 1)
        let metrics = try APIClient(port: app.server.port).get("/metrics").text
        #expect(metrics.contains("federation_inbox_total{outcome=\"duplicate\"} 1"))
        #expect(metrics.contains("federation_inbox_total{outcome=\"unsigned\"} 1"))

        // Suspended here, as a local account would be: nothing it sends is applied.
        try app.pool.withConnection { connection in
            try connection.query("UPDATE profiles SET suspended = true WHERE acct IS NOT NULL")
        }
        let unfollow = mallory.activity("Undo", object: ["type": "Follow", "actor": mallory.id, "object": ashActor])
        #expect(try Self.post(unfollow, to: app, headers: mallory.signedHeaders(path: "/inbox", body: unfollow)).status == 403)
        #expect(try Self.count("follows", in: app) == 1)
    }

    @Test func aRotatedKey_isFetchedAgain_atMostOnceAMinute() throws {
        let clock = ServerClock()
        let app = try FederatedInstance.start(clock: clock)
        defer { app.stop() }
        let mallory = try RemoteActor()
        defer { mallory.server.stop() }
        let (ash, ashActor) = try Self.local("ash@example.com", on: app)
        let first = mallory.activity("Follow", object: ashActor)
        #expect(try Self.post(first, to: app, headers: mallory.signedHeaders(path: "/inbox", body: first)).status == 202)
        #expect(mallory.fetches.load(ordering: .relaxed) == 1)

        try mallory.rotate()
        let undo = mallory.activity("Undo", object: ["type": "Follow", "actor": mallory.id, "object": ashActor])
        // Within the minute: the stored key is tried, not fetched again.
        #expect(try Self.post(undo, to: app, headers: mallory.signedHeaders(path: "/inbox", body: undo)).status == 401)
        #expect(mallory.fetches.load(ordering: .relaxed) == 1)
        clock.advance(by: .seconds(61))
        #expect(try Self.post(undo, to: app, headers: mallory.signedHeaders(path: "/inbox", body: undo)).status == 202)
        #expect(mallory.fetches.load(ordering: .relaxed) == 2)
        #expect(try Self.count("follows", in: app) == 0)
    }

    @Test func aBlockedDomain_isRefused_andAnAdminSetsIt() throws {
        let app = try FederatedInstance.start()
        defer { app.stop() }
        let mallory = try RemoteActor()
        defer { mallory.server.stop() }
        let (ash, ashActor) = try Self.local("ash@example.com", on: app)
        let admin = try APIClient.user("admin@example.com", on: app)
        _ = try admin.userID()
        let domain = "127.0.0.1:\(mallory.server.port)"
        #expect(try admin.send("PUT", "/api/moderation/domains/\(domain)", json: ["action": "block", "note": "spam"]).status == 403)
        _ = try Roles.grant("admin", toEmail: "admin@example.com", conninfo: try #require(app.configuration.databaseURL))
        let blocked = try admin.send("PUT", "/api/moderation/domains/\(domain)", json: ["action": "block", "note": "spam"])
        #expect(blocked.status == 200, "\(blocked.text)")
        #expect((blocked.json["domain"] as? [String: Any])?["action"] as? String == "block")
        #expect(try admin.send("PUT", "/api/moderation/domains/exa%20mple", json: ["action": "block"]).status == 422)
        #expect(try admin.send("PUT", "/api/moderation/domains/\(domain)", json: ["action": "mute"]).status == 422)
        let listed = try admin.get("/api/moderation/domains").json["domains"] as? [[String: Any]] ?? []
        #expect(listed.map { $0["domain"] as? String } == [domain])

        let follow = mallory.activity("Follow", object: ashActor)
        #expect(try Self.post(follow, to: app, headers: mallory.signedHeaders(path: "/inbox", body: follow)).status == 403)
        #expect(mallory.fetches.load(ordering: .relaxed) == 0, "nothing of a blocked domain is fetched")
        #expect(try ash.get("/api/profiles/@mallory@\(domain)").status == 404)

        #expect(try admin.send("DELETE", "/api/moderation/domains/\(domain)").status == 200)
        #expect(try admin.send("DELETE", "/api/moderation/domains/\(domain)").status == 404)
        #expect(try Self.post(follow, to: app, headers: mallory.signedHeaders(path: "/inbox", body: follow)).status == 202)
    }

    @Test func withoutAllowPrivate_noFetchReachesAPrivateAddress() throws {
        let app = try TestApplication.start { configuration in
            configuration.federation = FederationSettings(origin: "https://posts.example", domain: "posts.example", allowPrivate: false)
        }
        defer { app.stop() }
        let mallory = try RemoteActor()
        defer { mallory.server.stop() }
        let follow = mallory.activity("Follow", object: "https://posts.example/ap/users/1")
        // Its key is at a loopback address: never fetched, the request refused.
        #expect(try Self.post(follow, to: app, headers: mallory.signedHeaders(path: "/inbox", body: follow)).status == 401)
        #expect(mallory.fetches.load(ordering: .relaxed) == 0)
        let ash = try APIClient.user("ash@example.com", on: app)
        #expect(try ash.get("/api/profiles/@mallory@127.0.0.1:\(mallory.server.port)").status == 404)
        #expect(try ash.get("/api/profiles/@mallory@localhost:\(mallory.server.port)").status == 404)
        #expect(mallory.fetches.load(ordering: .relaxed) == 0)
    }
}
