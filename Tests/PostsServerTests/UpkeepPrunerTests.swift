import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// The upkeep pruning end to end: rows made through the real routes, some aged in the
/// database past their retention; one round removes exactly those, and what is live keeps
/// working (a token signs in, an Idempotency-Key still replays, the send-code limit counts).
@Suite struct UpkeepPrunerTests {
    private static func count(_ table: String, _ condition: String = "true", in app: Application) throws -> Int {
        try app.pool.withConnection { connection in
            try connection.query("SELECT count(*) AS n FROM \(unsafeSQL: table) WHERE \(unsafeSQL: condition)")
                .firstRow().decode("n")
        }
    }

    private static func age(_ sql: String, in app: Application) throws {
        try app.pool.withConnection { try $0.execute(unsafeSQL: sql) }
    }

    @Test func oldRowsGo_liveRowsStay() throws {
        let app = try TestApplication.start { $0.authMode = .token }
        defer { app.stop() }
        // The background round would race this one for the same rows.
        app.jobs.hold([.upkeepPrune])
        let client = try APIClient(port: app.server.port)
        let old = try AuthTests.signIn("old@example.com", in: app, client: client)
        let live = try AuthTests.signIn("live@example.com", in: app, client: client)
        let loggedOut = try AuthTests.signIn("gone@example.com", in: app, client: client)
        #expect(try client.send("POST", "/api/auth/logout", headers: ["Authorization": "Bearer \(loggedOut)"]).status == 200)
        #expect(try client.send("POST", "/api/auth/send-code", json: ["email": "waiting@example.com"]).status == 200)
        let post = ["title": "t", "summary": "s", "body": "b"]
        for key in ["key-old", "key-live"] {
            let created = try client.send("POST", "/api/posts", json: post,
                                          headers: ["Authorization": "Bearer \(live)", "Idempotency-Key": key])
            #expect(created.status == 201)
        }

        // Past retention: old@'s code (over an hour) and mail (over 24 h), its token unused
        // for 91 days, one idempotency key over 24 h old; and 2,500 dead codes, for batches.
        try Self.age("""
            UPDATE login_codes SET created_at = created_at - interval '2 hours', expires_at = expires_at - interval '2 hours'
                WHERE email = 'old@example.com';
            UPDATE outbox SET created_at = created_at - interval '25 hours' WHERE recipient = 'old@example.com';
            UPDATE tokens SET last_used_at = now() - interval '91 days'
                WHERE user_id = (SELECT id FROM users WHERE email = 'old@example.com');
            UPDATE idempotency_keys SET created_at = created_at - interval '25 hours' WHERE key = 'key-old';
            INSERT INTO login_codes (email, code_hash, created_at, expires_at)
                SELECT 'bulk@example.com', '\\x00', now() - interval '3 hours', now() - interval '170 minutes'
                FROM generate_series(1, 2500);
            INSERT INTO jobs (kind, payload, state, finished_at) VALUES
                ('push.deliver', '{}', 'dead', now() - interval '8 days'), ('push.deliver', '{}', 'dead', now() - interval '6 days');
            """, in: app)

        let removed = try app.upkeepPruner.pruneOnce().filter { $0.value > 0 }
        #expect(removed == ["login_codes": 2501, "outbox": 1, "idempotency_keys": 1, "jobs": 1, "tokens": 2])

        // What is live stays: the others' codes (used ones count for the hourly limit for an
        // hour), their mail, the live tokens and the fresh key.
        #expect(try Self.count("login_codes", in: app) == 3)
        #expect(try Self.count("outbox", in: app) == 3)
        #expect(try Self.count("tokens", in: app) == 1)
        #expect(try Self.count("idempotency_keys", in: app) == 1)
        // (Beside the pruners' own recurring jobs.)
        #expect(try Self.count("jobs", "NOT recurring", in: app) == 1, "the dead job a week old went; the younger one is kept")
        #expect(try client.get("/api/me", headers: ["Authorization": "Bearer \(live)"]).status == 200)
        #expect(try client.get("/api/me", headers: ["Authorization": "Bearer \(old)"]).status == 401)
        let replayed = try client.send("POST", "/api/posts", json: post,
                                       headers: ["Authorization": "Bearer \(live)", "Idempotency-Key": "key-live"])
        #expect(replayed.status == 201)
        #expect(try Self.count("posts", in: app) == 2, "the live key replayed instead of creating")

        // A second round finds nothing.
        #expect(try app.upkeepPruner.pruneOnce().values.reduce(0, +) == 0)
    }
}
