import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTP
import PostsClient
import Postgres
import PostsServer
import Synchronization
import Testing
import TestSupport

/// Reads from a real streaming replica (API.md "Many databases"): a replica made from the
/// test's own cluster with `pg_basebackup -R`, its replay paused to make lag on purpose, or
/// stopped. What a user just did is always what they read, through any instance with the
/// `Read-After` token PostsClient sends back and through the same instance without it;
/// everyone else's reads keep going to the replica; a replica lost costs nothing but its
/// share of the reads, and it takes them again once back.
@Suite(.serialized) struct ClientReplicaTests {
    @Test func whatAUserJustDid_isWhatTheyRead_whileOthersReadTheLaggingReplica() async throws {
        // Each client at an address of its own, as a load balancer names them: the servers
        // also remember each address's last write.
        let deployment = try await offPool {
            try ReplicaDeployment.start(instances: 2, maxLag: .seconds(120)) {
                $0.trustedProxies = try! TrustedProxies(parsing: "127.0.0.1/32")
            }
        }
        defer { deployment.stop() }
        // (A replica a moment behind the primary's first measured position is lagging until measured again.)
        #expect(try await offPool { eventually(timeout: .seconds(30)) { (try? deployment.replicas(on: 0).map { $0["state"] as? String }) == ["ok"] } })
        let ash = PostsClient(baseURL: deployment.url(0), retryPolicy: ClientTestServer.fastRetries)
        try await ash.developmentSignIn(email: "ash@example.com")
        let post = try await ash.createPost(draft("On the replica"))
        // Bob's client goes through a load balancer: each request to the next instance.
        let balancer = BalancingTransport(ports: deployment.apps.map(\.server.port), address: "203.0.113.2")
        let bob = PostsClient(baseURL: deployment.url(0), transport: balancer, retryPolicy: ClientTestServer.fastRetries)
        try await bob.developmentSignIn(email: "bob@example.com")
        let carol = PostsClient(baseURL: deployment.url(0), retryPolicy: ClientTestServer.fastRetries)
        try await carol.developmentSignIn(email: "carol@example.com")
        let carolToken = try #require(carol.token)
        // Each instance has met Carol (a caller read afresh reads from the primary once).
        for app in deployment.apps {
            #expect(try APIClient(port: app.server.port).get("/api/posts/\(post.id)", headers: Self.carol(carolToken)).status == 200)
        }
        // The servers measure it several times a second: until both have seen it that far.
        #expect(try await offPool { try deployment.waitUntilMeasuredCaughtUp() })

        try deployment.replica.pauseReplay()
        defer { try? deployment.replica.run("SELECT pg_wal_replay_resume()") }
        _ = try await bob.like(postID: post.id)
        let likedOn = try #require(balancer.ports.last)
        let token = try #require(bob.readAfter)
        // The next request goes to the other instance, with the token: it shows the like.
        let seen = try await bob.post(id: post.id)
        #expect(balancer.ports.last != likedOn)
        #expect(seen.likeCount == 1 && seen.likedByMe == true)

        // Without the token, on the instance that took the like: it remembers Bob's write.
        let bobToken = try #require(bob.token)
        // (From another address: what serves it is the memory of Bob's write.)
        let plain = try APIClient(port: likedOn).get("/api/posts/\(post.id)",
                                                      headers: ["Authorization": "Bearer \(bobToken)", "X-Forwarded-For": "203.0.113.5"])
        #expect(plain.json["post"].flatMap { ($0 as? [String: Any])?["like_count"] as? Int } == 1)

        // Taking the changes position: the full fetch after it finds everything before it,
        // with the token (Dana's client, anonymous) and without (the address, remembered).
        // (Dana takes the position on one instance and reads on the other, which has not met
        // her address: only the token can tell it.)
        let dana = PostsClient(baseURL: deployment.url(1), retryPolicy: ClientTestServer.fastRetries)
        _ = try await dana.changesPosition()
        let danaElsewhere = PostsClient(baseURL: deployment.url(0), retryPolicy: ClientTestServer.fastRetries)
        #expect(try await danaElsewhere.post(id: post.id).likeCount == 0)
        danaElsewhere.readAfter = try #require(dana.readAfter)
        #expect(try await danaElsewhere.post(id: post.id).likeCount == 1)
        let eve = try APIClient(port: deployment.apps[1].server.port)
        let eveAddress = ["X-Forwarded-For": "203.0.113.7"]
        #expect(try eve.get("/api/changes", headers: eveAddress).header("Read-After") != nil)
        let eveRead = try eve.get("/api/posts/\(post.id)", headers: eveAddress)
        #expect(eveRead.json["post"].flatMap { ($0 as? [String: Any])?["like_count"] as? Int } == 1)

        // Everyone else reads the replica, which has not replayed the like yet.
        let replicaReads = try deployment.readsServedBy(deployment.replicaName, on: 0)
        let carolReads = try APIClient(port: deployment.apps[0].server.port)
            .get("/api/posts/\(post.id)", headers: Self.carol(carolToken))
        #expect(carolReads.json["post"].flatMap { ($0 as? [String: Any])?["like_count"] as? Int } == 0)
        let anonymous = try APIClient(port: deployment.apps[1].server.port).get("/api/posts/\(post.id)",
                                                                                   headers: ["X-Forwarded-For": "203.0.113.4"])
        #expect(anonymous.json["post"].flatMap { ($0 as? [String: Any])?["like_count"] as? Int } == 0)
        #expect(try deployment.readsServedBy(deployment.replicaName, on: 0) > replicaReads)
        // A token the server did not make is judged by the primary.
        let odd = try APIClient(port: deployment.apps[0].server.port)
            .get("/api/posts/\(post.id)", headers: ["Read-After": "yesterday", "X-Forwarded-For": "203.0.113.6"])
        #expect(odd.json["post"].flatMap { ($0 as? [String: Any])?["like_count"] as? Int } == 1)
        #expect(token.contains("/"))

        // Replay again: the replica catches up and Carol sees the like there too.
        try deployment.replica.run("SELECT pg_wal_replay_resume()")
        try deployment.replica.waitUntilCaughtUp()
        let caughtUp = try APIClient(port: deployment.apps[0].server.port)
            .get("/api/posts/\(post.id)", headers: Self.carol(carolToken))
        #expect(caughtUp.json["post"].flatMap { ($0 as? [String: Any])?["like_count"] as? Int } == 1)
    }

    /// Until the replica's state in `/api/health` is `state`; false after `limit`.
    private static func state(of deployment: ReplicaDeployment, becomes state: String, within limit: Duration) async throws -> Bool {
        try await offPool { eventually(timeout: limit) { (try? deployment.replicas(on: 0).first?["state"] as? String) == state } }
    }

    /// Carol's requests: her token, from an address of her own.
    private static func carol(_ token: String) -> [String: String] {
        ["Authorization": "Bearer \(token)", "X-Forwarded-For": "203.0.113.3"]
    }

    @Test func aReplicaBehindTheLagLimit_takesNoReads_untilItCatchesUp() async throws {
        let deployment = try await offPool { try ReplicaDeployment.start(instances: 1, maxLag: .milliseconds(300)) }
        defer { deployment.stop() }
        let ash = PostsClient(baseURL: deployment.url(0), retryPolicy: ClientTestServer.fastRetries)
        try await ash.developmentSignIn(email: "ash@example.com")
        try deployment.replica.pauseReplay()
        defer { try? deployment.replica.run("SELECT pg_wal_replay_resume()") }
        let post = try await ash.createPost(draft("Written while the replica waits"))
        #expect(try await Self.state(of: deployment, becomes: "lagging", within: .seconds(20)))
        let lagMS = try #require(try deployment.replicas(on: 0).first?["lag_ms"] as? Int)
        #expect(lagMS >= 300)
        // Anyone's read goes to the primary meanwhile: the post is there.
        #expect(try APIClient(port: deployment.apps[0].server.port).get("/api/posts/\(post.id)").status == 200)
        try deployment.replica.run("SELECT pg_wal_replay_resume()")
        #expect(try await Self.state(of: deployment, becomes: "ok", within: .seconds(20)))
        let metrics = try APIClient(port: deployment.apps[0].server.port).get("/metrics").text
        #expect(metrics.contains("db_replica_up{replica=\"\(deployment.replicaName)\"} 1"))
        #expect(metrics.contains("db_replica_lag_seconds{replica=\"\(deployment.replicaName)\"}"))
    }

    @Test func aStoppedReplica_sendsReadsToThePrimary_andTakesThemAgainOnceBack() async throws {
        let deployment = try await offPool { try ReplicaDeployment.start(instances: 1, maxLag: .seconds(5)) }
        defer { deployment.stop() }
        let api = try APIClient(port: deployment.apps[0].server.port)
        let ash = PostsClient(baseURL: deployment.url(0), retryPolicy: ClientTestServer.fastRetries)
        try await ash.developmentSignIn(email: "ash@example.com")
        let post = try await ash.createPost(draft("Still readable"))
        try deployment.replica.waitUntilCaughtUp()
        #expect(try api.get("/api/posts/\(post.id)").status == 200)

        try await offPool { try deployment.replica.standby.stop() }
        let stopped = ContinuousClock.now
        // Every read answers, from the primary, at once (a read the replica drops is run again there).
        for _ in 0..<20 {
            #expect(try api.get("/api/posts/\(post.id)").status == 200)
        }
        #expect(try await Self.state(of: deployment, becomes: "down", within: .seconds(5)))
        #expect(ContinuousClock.now - stopped < .seconds(5))
        #expect(try deployment.replicas(on: 0).first?["lag_ms"] is NSNull)
        #expect(try api.get("/api/health").status == 200)

        try await offPool { try deployment.replica.standby.start() }
        #expect(try await Self.state(of: deployment, becomes: "ok", within: .seconds(30)))
        let before = try deployment.readsServedBy(deployment.replicaName, on: 0)
        #expect(try api.get("/api/posts/\(post.id)").status == 200)
        #expect(try deployment.readsServedBy(deployment.replicaName, on: 0) > before)
    }

    @Test func withoutReplicas_everyWriteStillCarriesAToken() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        _ = try await ash.createPost(draft("A"))
        #expect(ash.readAfter == "0/0")
        let health = try APIClient(port: server.app.server.port).get("/api/health")
        #expect((health.json["replicas"] as? [Any])?.isEmpty == true)
        #expect(health.header("Read-After") == nil)
    }
}

/// A load balancer in the client: each request goes to the next of `ports`, in turn.
final class BalancingTransport: HTTPTransport {
    private let upstream = URLSessionTransport()
    private let targets: [Int]
    private let address: String
    private let state = Mutex<(next: Int, sent: [Int])>((0, []))

    /// `address`: the client's, as the balancer names it (`X-Forwarded-For`).
    init(ports: [Int], address: String) {
        targets = ports
        self.address = address
    }

    /// The port each request went to, in order.
    var ports: [Int] { state.withLock { $0.sent } }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let port = state.withLock { state in
            let port = targets[state.next % targets.count]
            state.next += 1
            state.sent.append(port)
            return port
        }
        var routed = request
        var components = URLComponents(url: try #require(request.url), resolvingAgainstBaseURL: false)
        components?.port = port
        routed.url = components?.url
        routed.setValue(address, forHTTPHeaderField: "X-Forwarded-For")
        return try await upstream.send(routed)
    }
}

/// Runs blocking work (a cluster started, a state polled) on a thread of its own: blocking
/// a thread of the cooperative pool (two here) would starve other suites' tasks meanwhile.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
