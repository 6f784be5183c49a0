import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// An account with more follow partners than one transaction locks is deleted in two steps
/// (`AccountPurge`): at once its content and its profile go (nothing of it is readable after
/// the `200`) and it is signed out, its email free; then a job removes its follows, a batch
/// of partners a transaction, each recorded and counted, and the account.
@Suite struct AccountPurgeTests {
    @Test func aLargeAccount_isUnreadableAtOnce_thenPurged() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let star = try APIClient.user("star@example.com", on: app)
        let starID = try star.userID()
        #expect(try star.send("PATCH", "/api/profiles/me", json: ["full_name": "Star Person", "bio": "hello"]).status == 200)
        let followers = 2 * AccountPurge.partnersPerBatch + 40
        try BulkFollowers.make(followers, of: starID, in: app)
        let followed = try (0..<3).map { try APIClient.user("idol\($0)@example.com", on: app) }
        for idol in followed { #expect(try star.follow(try idol.userID()).status == 200) }
        let post = try star.createPost("soon gone").id
        let fan = try APIClient.user("fan1@example.com", on: app)
        #expect(try fan.send("PUT", "/api/posts/\(post)/like").status == 200)

        app.jobs.pause()
        #expect(try star.send("DELETE", "/api/me").status == 200)
        // At once: the content and the profile gone, the email free; its follow pages and
        // a follow of it are 404, and it is on no one's list.
        #expect(try fan.get("/api/posts/\(post)").status == 404)
        #expect(try fan.get("/api/profiles/\(starID)").status == 404)
        #expect(try APIClient(port: app.server.port).get("/api/profiles/\(starID)").status == 404)
        #expect(try fan.get("/api/users/\(starID)/followers").status == 404)
        #expect(try fan.get("/api/users/\(starID)/following").status == 404)
        #expect(try fan.walk("/api/users/\(try followed[0].userID())/followers", "profiles", limit: 100).isEmpty)
        #expect((try fan.get("/api/search?type=people&q=star").json["profiles"] as? [Any])?.isEmpty == true)
        let again = try APIClient.user("star@example.com", on: app)
        #expect(try again.userID() != starID, "the address is a new account's")
        let late = try APIClient.user("late@example.com", on: app)
        #expect(try late.follow(starID).status == 404)

        app.jobs.resume()
        #expect(try app.jobsDone([.accountPurge]))
        #expect(try fan.get("/api/profiles/\(starID)").status == 404)
        #expect(try FollowAudit.mismatches(in: app) == [0, 0, 0])
        let changes = try app.pool.withConnection { connection in
            try connection.query("""
                SELECT count(*) FILTER (WHERE type = 'follow.changed' AND NOT (data->>'following')::boolean) AS unfollows,
                       count(*) FILTER (WHERE type = 'profile.deleted') AS deletions
                FROM changes WHERE user_id = \(Int64(starID))
                """).firstRow()
        }
        #expect(try changes.decode("unfollows", as: Int.self) == followers + 3)
        #expect(try changes.decode("deletions", as: Int.self) == 1)
        for idol in followed { #expect(try idol.profile(try idol.userID())["followers_count"] as? Int == 0) }
    }
}
