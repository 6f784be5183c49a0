import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// The console in a real browser: Tests/TestSupport/console_flows.py drives Debian's
/// headless Chromium with Selenium against a server started here, with axe-core on every
/// page and screenshots at 1280 and 360 px saved to `.build/console-screenshots` (CI keeps
/// them). Against a production-mode server (token auth, a moderator made with `Roles`, as
/// `posts-server role` makes one) and against a trust-mode one (the dev pages). The flows
/// wait for each state they check (bounded), never for a time: a loaded machine slows
/// them down without failing them.
@Suite(.serialized) struct ConsoleBrowserTests {
    static let screenshots = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../.build/console-screenshots").standardizedFileURL.path

    static let suspectDevice = "Pixel-7 of the suspect"

    private static func flows(_ arguments: [String]) throws {
        let python = try #require(ProcessInfo.processInfo.environment["SMTP_RELAY_PYTHON"],
                                  "SMTP_RELAY_PYTHON is unset: run `source scripts/python-tools.sh` (it installs Selenium)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../TestSupport/console_flows.py").standardizedFileURL.path
        let outcome = try ChildProcess.run(python, [script] + arguments + ["--screenshots", screenshots])
        #expect(outcome.status == 0, "\(outcome.output)")
    }

    @Test func production_aModeratorWorksTheQueue_andAPlainUserIsRefused() throws {
        let app = try TestApplication.start { $0.authMode = .token }
        defer { app.stop() }
        let conninfo = try #require(app.configuration.directDatabaseURL)
        let api = try APIClient(port: app.server.port)
        // The moderator has signed in once (the account exists), then the operator's command.
        _ = try AuthTests.signIn("mod@example.com", in: app, client: api)
        #expect(try Roles.grant("moderator", toEmail: "mod@example.com", conninfo: conninfo)?.now == "moderator")
        // The suspect signs in from a named device: the Users page lists that session.
        let suspect = try APIClient(port: app.server.port)
        let token = try AuthTests.signIn("suspect@example.com", device: Self.suspectDevice, in: app, client: suspect)
        suspect.headers["Authorization"] = "Bearer \(token)"
        let post = try suspect.createPost("Something to report")
        let suspectID = try suspect.userID()
        let reporter = try APIClient(port: app.server.port)
        reporter.headers["Authorization"] = "Bearer \(try AuthTests.signIn("plain@example.com", in: app, client: reporter))"
        #expect(try reporter.send("POST", "/api/reports",
                                  json: ["post_id": post.id, "reason": "spam", "details": "Report for the console"]).status == 201)

        try Self.flows(["production", "--url", "http://127.0.0.1:\(app.server.port)", "--conninfo", conninfo,
                        "--moderator", "mod@example.com", "--user", "plain@example.com", "--suspect-id", String(suspectID),
                        "--suspect-device", Self.suspectDevice])

        // What the browser did is what the API shows: the post removed, the user back, all logged.
        #expect(try reporter.get("/api/posts/\(post.id)").status == 404)
        // The suspension revoked the suspect's token; unsuspended, they sign in again.
        #expect(try suspect.get("/api/me").status == 401)
        _ = try AuthTests.signIn("suspect@example.com", in: app, client: try APIClient(port: app.server.port))
        let mod = try APIClient(port: app.server.port)
        mod.headers["Authorization"] = "Bearer \(try AuthTests.signIn("mod@example.com", in: app, client: mod))"
        let actions = (try mod.get("/api/moderation/log").json["entries"] as? [[String: Any]] ?? []).compactMap { $0["action"] as? String }
        #expect(Set(actions).isSuperset(of: ["remove", "suspend", "unsuspend"]), "\(actions)")
    }

    @Test func trust_theMailboxShowsTheCode_seedFillsTheOverview_andTheTestSuiteControlsWork() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient.user("dev-moderator@example.com", on: app)
        _ = try client.get("/api/me")
        // An admin: the Domains page's blocks are theirs.
        _ = try Roles.grant("admin", toEmail: "dev-moderator@example.com", conninfo: try #require(app.configuration.directDatabaseURL))
        try Self.flows(["trust", "--url", "http://127.0.0.1:\(app.server.port)"])
    }
}
