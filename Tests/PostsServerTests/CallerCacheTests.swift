import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// A caller an instance remembers (`CallerCache`) is checked by its proof ahead of each
/// request's first statement: whatever another instance changed (a revoked token, a block,
/// a suspension) applies to the very next request here, and a write whose proof failed is
/// done once, with the caller read afresh.
@Suite struct CallerCacheTests {
    /// Two instances of one database: what one changes, the other must see at once.
    private static func pair(token: Bool) throws -> (Application, Application) {
        let database = try TestDatabase.makeDatabase()
        let first = try TestApplication.start(conninfo: database) { if token { $0.authMode = .token } }
        do {
            let second = try TestApplication.start(conninfo: database) { if token { $0.authMode = .token } }
            return (first, second)
        } catch {
            first.stop()
            throw error
        }
    }

    @Test func aTokenRevokedOnAnotherInstance_isRefusedAtOnce() throws {
        let (here, there) = try Self.pair(token: true)
        defer { here.stop(); there.stop() }
        let token = try AuthTests.signIn("ash@example.com", in: here, client: try APIClient(port: here.server.port))
        let onHere = try APIClient(port: here.server.port)
        let onThere = try APIClient(port: there.server.port)
        for client in [onHere, onThere] { client.headers["Authorization"] = "Bearer \(token)" }
        // Remembered by both.
        for _ in 0..<2 {
            #expect(try onHere.get("/api/me").status == 200)
            #expect(try onThere.get("/api/me").status == 200)
        }
        #expect(try onThere.send("POST", "/api/auth/logout").status == 200)
        #expect(try onHere.get("/api/me").status == 401)
        // An optional route refuses dead credentials as well.
        #expect(try onHere.get("/api/posts/recent").status == 401)
    }

    @Test func aBlockMadeOnAnotherInstance_hidesAtOnce_andRefusesTheNextLike() throws {
        let (here, there) = try Self.pair(token: false)
        defer { here.stop(); there.stop() }
        let ash = try APIClient.user("ash@example.com", on: here)
        let blairThere = try APIClient.user("blair@example.com", on: there)
        let post = try blairThere.createPost("Blair's").id
        let ashID = try ash.userID()
        #expect(try ash.get("/api/posts/\(post)").status == 200)

        #expect(try blairThere.send("PUT", "/api/users/\(ashID)/block").status == 200)
        #expect(try ash.get("/api/posts/\(post)").status == 404)
        #expect(try ash.send("PUT", "/api/posts/\(post)/like").status != 200)
        #expect(try blairThere.post(post)?.int("like_count") == 0)
    }

    @Test func aWriteWhoseCallerChanged_isDoneOnce() throws {
        let (here, there) = try Self.pair(token: false)
        defer { here.stop(); there.stop() }
        let ash = try APIClient.user("ash@example.com", on: here)
        let blair = try APIClient.user("blair@example.com", on: here)
        let first = try blair.createPost("one").id
        let second = try blair.createPost("two").id
        #expect(try ash.send("PUT", "/api/posts/\(first)/like").status == 200)
        // Ash's blocks and mutes move on elsewhere (a mute of a third user): the remembered
        // caller's proof fails, the like's statement is skipped, and it runs again.
        let cass = try APIClient.user("cass@example.com", on: there)
        let ashThere = try APIClient.user("ash@example.com", on: there)
        #expect(try ashThere.send("PUT", "/api/users/\(try cass.userID())/mute").status == 200)
        let liked = try ash.send("PUT", "/api/posts/\(second)/like")
        #expect(liked.status == 200)
        #expect(liked.json["like_count"] as? Int == 1)
        #expect(try blair.post(second)?.int("like_count") == 1)
        let likes: Int = try here.pool.withConnection { connection in
            try connection.query("SELECT count(*)::int AS n FROM likes WHERE post_id = \(Int64(second))").first!.decode("n")
        }
        #expect(likes == 1)
    }

    @Test func aSuspensionWrittenElsewhere_refusesTheNextRequest() throws {
        let (here, there) = try Self.pair(token: false)
        defer { here.stop(); there.stop() }
        let ash = try APIClient.user("ash@example.com", on: here)
        let ashID = try ash.userID()
        #expect(try ash.get("/api/me").status == 200)
        try there.pool.withConnection { connection in
            try connection.query("UPDATE users SET suspended_at = now() WHERE id = \(Int64(ashID))")
        }
        #expect(try ash.get("/api/me").status == 403)
        #expect(try ash.createPostStatus() == 403)
    }
}

private extension APIClient {
    func createPostStatus() throws -> Int {
        try send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b"]).status
    }
}

/// The cache's memory is bounded whatever the number of callers, and filling it forgets
/// the callers least recently seen, not everyone at once.
@Suite struct CallerCacheCapacityTests {
    private static func entry(_ id: Int64) -> CallerCache.Entry {
        CallerCache.Entry(caller: Caller(userID: id, tokenID: nil), relationsVersion: 0)
    }

    @Test func pastItsCapacity_theOldestGenerationGoes_andARecentCallerStays() {
        let cache = CallerCache(capacity: 4)
        cache.remember(Self.entry(1), as: "one")
        cache.remember(Self.entry(2), as: "two")
        // A third ages the first two; "one" is seen again, so it is young again.
        cache.remember(Self.entry(3), as: "three")
        #expect(cache.entry("one")?.caller.userID == 1)
        // A fourth ages "three" and "one": "two", unseen since, goes with the old generation.
        cache.remember(Self.entry(4), as: "four")
        cache.remember(Self.entry(5), as: "five")
        #expect(cache.entry("two") == nil)
        #expect(cache.entry("five")?.caller.userID == 5)
        #expect(cache.entry("one")?.caller.userID == 1)
        #expect(cache.count <= 4)
        cache.forget("five")
        #expect(cache.entry("five") == nil)
    }

    @Test func manyCallers_neverHoldMoreThanTheCapacity() {
        let cache = CallerCache(capacity: 100)
        for id in 0..<1_000 {
            cache.remember(Self.entry(Int64(id)), as: "caller \(id)")
            #expect(cache.count <= 100)
        }
        #expect(cache.entry("caller 999")?.caller.userID == 999)
    }
}
