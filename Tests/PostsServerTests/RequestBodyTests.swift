import Foundation
import PostsServer
import Testing
import TestSupport

/// Bodies that cannot be read as sent say why (API.md: 400 `bad_request`), whichever
/// reader the route uses: `BodyFields` (posts, comments) or `RequestFields` (profiles).
@Suite struct RequestBodyTests {
    /// A JSON post whose title holds bytes that are not UTF-8 (0xC3 starts a two-byte
    /// sequence that 0x28 does not continue; 0xFF is never UTF-8).
    private static let badUTF8Post: [UInt8] =
        Array(#"{"title":"caf"#.utf8) + [0xC3, 0x28] + Array(#"","summary":"s","body":"b"}"#.utf8)

    private static func expectBadRequest(_ response: RawHTTPClient.Response, saying words: String,
                                         sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 400, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.json["error"] as? String == "bad_request", "\(response.text)", sourceLocation: sourceLocation)
        let message = response.json["message"] as? String ?? ""
        #expect(message.contains(words), "\(message)", sourceLocation: sourceLocation)
    }

    @Test func jsonThatIsNotUTF8_is400_sayingSo_notThatAFieldIsNoString() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.send("POST", "/api/posts", body: Self.badUTF8Post, contentType: "application/json")
        Self.expectBadRequest(post, saying: "not valid UTF-8")
        let bio = Array(#"{"bio":"#.utf8) + [0x22, 0xFF, 0x22] + Array("}".utf8)
        let profile = try ash.send("PATCH", "/api/profiles/me", body: bio, contentType: "application/json; charset=utf-8")
        Self.expectBadRequest(profile, saying: "not valid UTF-8")
        // Valid UTF-8 beyond ASCII is, of course, fine.
        let valid = try ash.send("POST", "/api/posts", json: ["title": "café 🇵🇹", "summary": "s", "body": "b"])
        #expect(valid.status == 201, "\(valid.text)")
    }

    /// `curl -d '{"title":…}'` without `-H 'Content-Type: application/json'` sends the
    /// JSON as an urlencoded form: the answer says to send it as JSON, not "title is
    /// required", on every route that takes a form.
    @Test func jsonSentAsAForm_is400_sayingToSendItAsJSON() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let form = "application/x-www-form-urlencoded"
        let post = try ash.send("POST", "/api/posts", body: Array(#"{"title":"x","summary":"s","body":"b"}"#.utf8),
                                contentType: form)
        Self.expectBadRequest(post, saying: "Content-Type: application/json")
        let created = try ash.createPost()
        let comment = try ash.send("POST", "/api/posts/\(created.id)/comments", body: Array(" \n{\"body\": \"hi\"}\n".utf8),
                                   contentType: form)
        Self.expectBadRequest(comment, saying: "Content-Type: application/json")
        let profile = try ash.send("PATCH", "/api/profiles/me", body: Array(#"{"bio":"hello"}"#.utf8), contentType: form)
        Self.expectBadRequest(profile, saying: "Content-Type: application/json")
        // A real form is still a form, braces in its values included.
        let real = try ash.send("POST", "/api/posts", body: Array("title=%7Bx%7D&summary=s&body=%7B%7D".utf8), contentType: form)
        #expect(real.status == 201 && (real.json["post"] as? [String: Any])?["title"] as? String == "{x}", "\(real.text)")
        let count: Int = try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM posts").first!.decode("n") }
        #expect(count == 2)
    }
}
