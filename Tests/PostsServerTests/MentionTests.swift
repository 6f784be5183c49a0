import Foundation
import PostsServer
import Testing
import TestSupport

/// Mentions end to end: resolved when the text is written, UTF-8 byte offsets into the
/// field, case-insensitive, unknown names ignored, kept by id through a rename, parsed
/// again by an edit, on comments too, and in the changes.
// One test at a time: each starts a server, and the whole run's thread count must stay
// under what `ServerConcurrencyTests` allows the process (it counts /proc/self's threads).
@Suite(.serialized) struct MentionTests {
    private static func mentions(_ object: [String: Any]?) -> [[String: Any]] {
        (object?["mentions"] as? [[String: Any]]) ?? []
    }

    /// The bytes of `text` the mention's offsets name.
    private static func slice(_ text: String, _ mention: [String: Any]) -> String? {
        guard let start = mention["start"] as? Int, let end = mention["end"] as? Int, start <= end, end <= text.utf8.count else {
            return nil
        }
        return String(decoding: Array(text.utf8)[start..<end], as: UTF8.self)
    }

    @Test func postMentions_haveUTF8Offsets_afterEmojiAndAccents() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let blairID = try blair.userID()
        let title = "Café 👩‍👩‍👧 with @Blair"
        let body = "e\u{301}té 🎉@blair, @nobody_here and ash@example.com; again @BLAIR."
        let post = try ash.createPost(title, extra: ["body": body])
        let found = Self.mentions(post)
        #expect(found.map { $0["field"] as? String } == ["title", "body", "body"])
        #expect(found.allSatisfy { $0["user_id"] as? Int == blairID && $0["username"] as? String == "blair" })
        #expect(found.map { Self.slice($0["field"] as? String == "title" ? title : body, $0) } == ["@Blair", "@blair", "@BLAIR"])
        // Byte offsets, not character offsets: the title's "@" is 30 bytes in, 12 characters.
        #expect(found.first?["start"] as? Int == 30)
        // The same from a read, and none on a post without any.
        #expect(Self.mentions(try ash.post(post.id)).count == 3)
        let plain = try ash.createPost("No one")
        #expect((plain["mentions"] as? [Any])?.isEmpty == true)
        #expect((try ash.get("/api/posts/recent").json["posts"] as? [[String: Any]])?.allSatisfy { $0["mentions"] is [Any] } == true)
    }

    @Test func aRenamedUser_keepsTheirMentions_andAnEditParsesAgain() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let carol = try APIClient.user("carol@example.com", on: app)
        let blairID = try blair.userID()
        let carolID = try carol.userID()
        let post = try ash.createPost("Hi @blair", extra: ["body": "nobody yet"]).id
        #expect(try blair.send("PATCH", "/api/profiles/me", json: ["username": "blair_renamed"]).status == 200)
        let kept = Self.mentions(try ash.post(post))
        #expect(kept.map { $0["user_id"] as? Int } == [blairID])
        // Edit the body only: the title's mention stays blair's, the body is parsed again.
        let edited = try ash.send("PATCH", "/api/posts/\(post)", json: ["body": "now @carol and @blair"])
        #expect(edited.status == 200)
        let after = Self.mentions(edited.json["post"] as? [String: Any])
        #expect(after.map { $0["user_id"] as? Int } == [blairID, carolID])
        #expect(after.map { $0["field"] as? String } == ["title", "body"])
        // Edit the title: "@blair" names no one any more.
        let retitled = try ash.send("PATCH", "/api/posts/\(post)", json: ["title": "Hi @blair"])
        #expect(Self.mentions(retitled.json["post"] as? [String: Any]).map { $0["user_id"] as? Int } == [carolID])
    }

    /// A sentence's full stop is no part of a name, unless a username ends with it.
    @Test func trailingDots_nameTheLongestUsernameThatExists() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let dot = try APIClient.user("dot@example.com", on: app)
        #expect(try dot.send("PATCH", "/api/profiles/me", json: ["username": "dot."]).status == 200)
        let body = "thanks @ash. and @dot. and @dot"
        let comment = try ThreadTests.comment(ash, on: try ash.createPost().id, body)
        #expect(Self.mentions(comment).map { Self.slice(body, $0) } == ["@ash", "@dot."])
        #expect(Self.mentions(comment).map { $0["user_id"] as? Int } == [try ash.userID(), try dot.userID()])
    }

    @Test func commentMentions_andTheChangeCarriesThem() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let blairID = try blair.userID()
        let post = try ash.createPost().id
        let since = try #require(try ash.get("/api/changes").json["next_since"] as? String)
        let body = "ünïcödé (@blair) @blair@elsewhere.social @ash"
        let comment = try ThreadTests.comment(ash, on: post, body)
        let found = Self.mentions(comment)
        #expect(found.map { Self.slice(body, $0) } == ["@blair", "@ash"])
        #expect(found.first?["user_id"] as? Int == blairID && found.allSatisfy { $0["field"] as? String == "body" })
        let listed = (try ash.get("/api/posts/\(post)/comments").json["comments"] as? [[String: Any]])?.first
        #expect(Self.mentions(listed).count == 2)
        let change = try ThreadTests.changes(ash, since: since, count: 1).first
        #expect(Self.mentions(change?["comment"] as? [String: Any]).count == 2)
    }
}
