import Foundation
import PostsServer
import Testing
import TestSupport

/// API.md's word filter over HTTP: every text a client writes is checked against
/// `BLOCKED_WORDS_FILE` (422 `validation_failed`, "contains a blocked word").
@Suite struct BlockedWordsTests {
    private static let list = """
        # words and phrases no one may post
        badword
        hate speech
        """

    private static func start(list: String = list) throws -> (Application, path: String) {
        let path = try BlockedWordsFileTests.write(list)
        let app = try TestApplication.start { $0.blockedWordsFile = path }
        return (app, path)
    }

    private static func expectRefused(_ response: RawHTTPClient.Response, _ what: String,
                                      sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 422, "\(what): \(response.text)", sourceLocation: sourceLocation)
        #expect(response.json["error"] as? String == "validation_failed", "\(what)", sourceLocation: sourceLocation)
        #expect(response.json["message"] as? String == "contains a blocked word", "\(what)", sourceLocation: sourceLocation)
    }

    @Test func postTexts_areRefusedOnCreateAndEdit_inJSONFormsAndMultipart() throws {
        let (app, path) = try Self.start()
        defer { app.stop(); try? FileManager.default.removeItem(atPath: path) }
        let ash = try APIClient.user("ash@example.com", on: app)
        let clean: [String: Any?] = ["title": "A title", "summary": "A summary", "body": "A body"]
        for field in ["title", "summary", "body"] {
            var fields = clean
            fields[field] = "This is a BadWord, really"
            Self.expectRefused(try ash.send("POST", "/api/posts", json: fields), "create \(field)")
        }
        var form = MultipartBody()
        form.field("title", "A title")
        form.field("summary", "A summary")
        form.field("body", "no hate-speech please")
        Self.expectRefused(try ash.send("POST", "/api/posts/create", body: form.finished, contentType: MultipartBody.contentType),
                           "multipart create")

        let post = try ash.createPost("A classy title about passages")
        Self.expectRefused(try ash.send("PATCH", "/api/posts/\(post.id)", json: ["title": "badword"]), "patch title")
        Self.expectRefused(try ash.send("POST", "/api/posts/update", body: Array("post_id=\(post.id)&body=a+badword".utf8),
                                        contentType: "application/x-www-form-urlencoded"), "form update body")
        var edit = MultipartBody()
        edit.field("summary", "ＢＡＤＷＯＲＤ")
        Self.expectRefused(try ash.send("PATCH", "/api/posts/\(post.id)", body: edit.finished, contentType: MultipartBody.contentType),
                           "multipart patch summary")
        #expect(try ash.post(post.id)?["title"] as? String == "A classy title about passages", "nothing was changed")
        #expect(try ash.send("PATCH", "/api/posts/\(post.id)", json: ["body": "hate, then speech? no: hate and speech"]).status == 200)
    }

    @Test func comments_areRefused() throws {
        let (app, path) = try Self.start()
        defer { app.stop(); try? FileManager.default.removeItem(atPath: path) }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost()
        Self.expectRefused(try ash.send("POST", "/api/posts/\(post.id)/comments", json: ["body": "Hate\u{00A0}Speech!"]), "comment")
        #expect(try ash.send("POST", "/api/posts/\(post.id)/comments", json: ["body": "a fine comment"]).status == 201)
        #expect(try ash.get("/api/posts/\(post.id)/comments").json["count"] as? Int == 1)
    }

    @Test func profileTexts_areRefused() throws {
        let (app, path) = try Self.start()
        defer { app.stop(); try? FileManager.default.removeItem(atPath: path) }
        let ash = try APIClient.user("ash@example.com", on: app)
        Self.expectRefused(try ash.send("PATCH", "/api/profiles/me", json: ["username": "ash.badword"]), "username")
        Self.expectRefused(try ash.send("PATCH", "/api/profiles/me", json: ["full_name": "Ash ﬁ Badword"]), "full name")
        Self.expectRefused(try ash.send("PATCH", "/api/profiles/me", json: ["bio": "I love hate speech"]), "bio")
        let fine = try ash.send("PATCH", "/api/profiles/me", json: ["username": "badwords", "bio": "Badwordsmith"])
        #expect(fine.status == 200, "\(fine.text)")
    }

    /// A username made from an email at first sign-in holds no blocked word either.
    @Test func usernamesMadeAtSignIn_avoidBlockedWords() throws {
        let (app, path) = try Self.start()
        defer { app.stop(); try? FileManager.default.removeItem(atPath: path) }
        let me = try APIClient.user("BadWord@example.com", on: app).get("/api/me")
        let profile = try #require(me.json["profile"] as? [String: Any], "\(me.text)")
        #expect(profile["username"] as? String == "user")
    }

    @Test func compatibilityFormsAndCase_match_wordsInsideOthersDoNot() throws {
        let (app, path) = try Self.start(list: "ass\nﬁsh\n")
        defer { app.stop(); try? FileManager.default.removeItem(atPath: path) }
        let ash = try APIClient.user("ash@example.com", on: app)
        for bio in ["ＡＳＳ", "Ass.", "a FISH", "ﬁsh", "ＦＩＳＨ"] {
            Self.expectRefused(try ash.send("PATCH", "/api/profiles/me", json: ["bio": bio]), bio)
        }
        for bio in ["class", "passage", "assess the fishing", "Sassafras", "selfish"] {
            #expect(try ash.send("PATCH", "/api/profiles/me", json: ["bio": bio]).status == 200, "\(bio)")
        }
    }

    @Test func withoutAFile_nothingIsFiltered() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        #expect(app.blockedWords.path == nil)
        let ash = try APIClient.user("ash@example.com", on: app)
        #expect(try ash.send("PATCH", "/api/profiles/me", json: ["bio": "badword"]).status == 200)
    }

    @Test func anUnreadableFile_stopsTheStart_namingIt() throws {
        let missing = NSTemporaryDirectory() + "no-such-list-\(UUID().uuidString)"
        let error = #expect(throws: (any Error).self) {
            _ = try TestApplication.start { $0.blockedWordsFile = missing }
        }
        #expect(error.map { "\($0)" }?.contains("BLOCKED_WORDS_FILE \(missing): No such file") == true)
    }

    /// `Application.reload` (what SIGHUP calls) swaps the list in; a broken file keeps it.
    @Test func reload_swapsTheList_andABrokenFileKeepsIt() throws {
        let (app, path) = try Self.start(list: "alpha\n")
        defer { app.stop(); try? FileManager.default.removeItem(atPath: path) }
        let ash = try APIClient.user("ash@example.com", on: app)
        #expect(try ash.send("PATCH", "/api/profiles/me", json: ["bio": "beta"]).status == 200)
        try Data("alpha\nbeta\n".utf8).write(to: URL(fileURLWithPath: path))
        app.reload()
        Self.expectRefused(try ash.send("PATCH", "/api/profiles/me", json: ["bio": "beta"]), "after reload")
        try Data([0xFF, 0xFE, 0x00]).write(to: URL(fileURLWithPath: path))
        app.reload()
        Self.expectRefused(try ash.send("PATCH", "/api/profiles/me", json: ["bio": "beta"]), "after a failed reload")
        try FileManager.default.removeItem(atPath: path)
        app.reload()
        Self.expectRefused(try ash.send("PATCH", "/api/profiles/me", json: ["bio": "alpha"]), "after the file went")
    }
}
