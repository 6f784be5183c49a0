import Foundation
import Postgres
import PostsServer
import Testing
import TestSupport

/// A remembered caller's proof is the primary's to judge, also when its reads go to a
/// replica (API.md "Sessions and the account", "Safety": a revoked token and a suspension
/// apply at once): with the replica's replay paused, a token revoked and a user suspended
/// on the primary are refused on the very next read, while the reads of everyone else keep
/// going to the lagging replica.
@Suite(.serialized) struct CallerProofReplicaTests {
    @Test func aRevokedTokenAndASuspension_areRefusedAtOnce_whileReadsGoToALaggingReplica() throws {
        let deployment = try ReplicaDeployment.start(instances: 1, maxLag: .seconds(120)) { $0.authMode = .token }
        defer { deployment.stop() }
        let app = deployment.apps[0]
        let names = ["ash", "bea", "cy"]
        let clients = try names.map { name in
            let client = try APIClient(port: app.server.port)
            let token = try AuthTests.signIn("\(name)@example.com", in: app, client: client)
            client.headers["Authorization"] = "Bearer \(token)"
            return client
        }
        let (ash, bea, cy) = (clients[0], clients[1], clients[2])
        let post = try cy.createPost("Read on the replica").id
        // Each caller is read afresh once (from the primary), then remembered; the replica
        // replays everything so far, and the callers' reads go to it.
        for client in clients { #expect(try client.get("/api/posts/\(post)").status == 200) }
        #expect(try deployment.waitUntilMeasuredCaughtUp())
        let before = try deployment.readsServedBy(deployment.replicaName, on: 0)
        for client in clients { #expect(try client.get("/api/posts/\(post)").status == 200) }
        #expect(try deployment.readsServedBy(deployment.replicaName, on: 0) >= before + 3)

        try deployment.replica.pauseReplay()
        defer { try? deployment.replica.run("SELECT pg_wal_replay_resume()") }
        // Written on the primary, as another instance (or an operator) would: the replica
        // has neither.
        try app.pool.withConnection { connection in
            try connection.query("""
                UPDATE tokens SET revoked_at = now() WHERE user_id = (SELECT id FROM users WHERE email = 'ash@example.com')
                """)
            try connection.query("UPDATE users SET suspended_at = now() WHERE email = 'bea@example.com'")
        }
        #expect(try ash.get("/api/posts/\(post)").status == 401)
        #expect(try bea.get("/api/posts/\(post)").status == 401)
        #expect(try ash.get("/api/posts/recent").status == 401)
        #expect(try bea.get("/api/posts/\(post)/children").status == 401)

        // Cy's reads still go to the lagging replica, her proof checked on the primary.
        let replicaReads = try deployment.readsServedBy(deployment.replicaName, on: 0)
        #expect(try cy.get("/api/posts/\(post)").status == 200)
        #expect(try cy.get("/api/posts/recent").status == 200)
        #expect(try deployment.readsServedBy(deployment.replicaName, on: 0) >= replicaReads + 2)
    }
}
