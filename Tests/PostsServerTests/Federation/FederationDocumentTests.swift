import _CryptoExtras
import Foundation
@testable import PostsServer
import Testing
import TestSupport

/// API.md "Federation": what other servers read of us — WebFinger, host-meta, NodeInfo,
/// actors with their keys and collections, posts and comments as `Note`s, tombstones.
@Suite struct FederationDocumentTests {
    static let activityJSON = ["Accept": "application/activity+json"]

    @Test func webFinger_findsTheActor_whoseKeyIsMadeOnce_andWhoseIdSurvivesARename() throws {
        let app = try FederatedInstance.start()
        defer { app.stop() }
        let domain = FederatedInstance.domain(of: app)
        let origin = "http://\(domain)"
        let ash = try APIClient.user("ash@example.com", on: app)
        let ashID = try ash.userID()
        let username = try #require((try ash.get("/api/me").json["profile"] as? [String: Any])?["username"] as? String)
        let anyone = try APIClient(port: app.server.port)

        let finger = try anyone.get("/.well-known/webfinger?resource=acct:\(username)@\(domain)")
        #expect(finger.status == 200, "\(finger.text)")
        #expect(finger.header("Content-Type")?.hasPrefix("application/jrd+json") == true)
        #expect(finger.json["subject"] as? String == "acct:\(username)@\(domain)")
        let links = finger.json["links"] as? [[String: Any]] ?? []
        let actorID = try #require(links.first { $0["rel"] as? String == "self" }?["href"] as? String)
        #expect(links.first { $0["rel"] as? String == "self" }?["type"] as? String == "application/activity+json")
        #expect(actorID == "\(origin)/ap/users/\(ashID)")
        #expect(try anyone.get("/.well-known/webfinger?resource=acct:nobody@\(domain)").status == 404)
        #expect(try anyone.get("/.well-known/webfinger?resource=acct:\(username)@elsewhere.example").status == 404)
        #expect(try anyone.get("/.well-known/webfinger").status == 400)

        let person = try anyone.get("/users/\(username)", headers: Self.activityJSON)
        #expect(person.status == 200)
        #expect(person.header("Content-Type")?.hasPrefix("application/activity+json") == true)
        #expect(person.json["id"] as? String == actorID && person.json["type"] as? String == "Person")
        #expect(person.json["preferredUsername"] as? String == username)
        for member in ["inbox", "outbox", "followers", "following"] {
            #expect((person.json[member] as? String)?.hasPrefix(actorID) == true, "\(member)")
        }
        #expect((person.json["endpoints"] as? [String: Any])?["sharedInbox"] as? String == "\(origin)/inbox")
        let key = try #require(person.json["publicKey"] as? [String: Any])
        #expect(key["id"] as? String == "\(actorID)#main-key" && key["owner"] as? String == actorID)
        let pem = try #require(key["publicKeyPem"] as? String)
        #expect(try _RSA.Signing.PublicKey(pemRepresentation: pem).keySizeInBits == 2048)

        // Renamed: the same actor, the same key, served under its new name too.
        #expect(try ash.send("PATCH", "/api/profiles/me", json: ["username": "ash_renamed"]).status == 200)
        let renamed = try anyone.get("/users/ash_renamed", headers: Self.activityJSON)
        #expect(renamed.json["id"] as? String == actorID)
        #expect((renamed.json["publicKey"] as? [String: Any])?["publicKeyPem"] as? String == pem)
        #expect(try anyone.get("/ap/users/\(ashID)").json["preferredUsername"] as? String == "ash_renamed")
        #expect(try anyone.get("/users/\(username)").status == 404)

        let hostMeta = try anyone.get("/.well-known/host-meta")
        #expect(hostMeta.text.contains("\(origin)/.well-known/webfinger?resource={uri}"))
        let nodeInfoLink = try anyone.get("/.well-known/nodeinfo").json["links"] as? [[String: Any]] ?? []
        #expect(nodeInfoLink.first?["href"] as? String == "\(origin)/nodeinfo/2.1")
        let nodeInfo = try anyone.get("/nodeinfo/2.1").json
        #expect(nodeInfo["version"] as? String == "2.1" && nodeInfo["protocols"] as? [String] == ["activitypub"])
        #expect(((nodeInfo["usage"] as? [String: Any])?["users"] as? [String: Any])?["total"] as? Int == 1)

        let instance = try anyone.get("/actor").json
        #expect(instance["id"] as? String == "\(origin)/actor" && instance["type"] as? String == "Application")
    }

    @Test func postsAndComments_areNotes_andDeletedOnesTombstones() throws {
        let app = try FederatedInstance.start()
        defer { app.stop() }
        let origin = "http://\(FederatedInstance.domain(of: app))"
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let blairName = try #require((try blair.get("/api/me").json["profile"] as? [String: Any])?["username"] as? String)
        let ashID = try ash.userID(), blairID = try blair.userID()
        let post = try ash.createPost("Hello <world> & #spring", extra: ["body": "Line one\nline two @\(blairName)"]).id
        let anyone = try APIClient(port: app.server.port)

        let note = try anyone.get("/posts/\(post)", headers: Self.activityJSON)
        #expect(note.status == 200, "\(note.text)")
        #expect(note.json["type"] as? String == "Note" && note.json["id"] as? String == "\(origin)/posts/\(post)")
        #expect(note.json["attributedTo"] as? String == "\(origin)/ap/users/\(ashID)")
        #expect(note.json["content"] as? String
            == "<p>Hello &lt;world&gt; &amp; #spring</p><p>A summary</p><p>Line one<br>line two @\(blairName)</p>")
        #expect(note.json["to"] as? [String] == [ActivityPub.publicCollection])
        #expect(note.json["cc"] as? [String] == ["\(origin)/ap/users/\(ashID)/followers"])
        let tags = note.json["tag"] as? [[String: Any]] ?? []
        #expect(tags.contains { $0["type"] as? String == "Hashtag" && $0["name"] as? String == "#spring" })
        #expect(tags.contains { $0["type"] as? String == "Mention" && $0["href"] as? String == "\(origin)/ap/users/\(blairID)" })
        #expect(note.json["inReplyTo"] == nil)

        let child = try blair.createPost("A reply", parent: post).id
        #expect(try anyone.get("/posts/\(child)").json["inReplyTo"] as? String == "\(origin)/posts/\(post)")
        let commented = try blair.send("POST", "/api/posts/\(post)/comments", json: ["body": "Nice <b>one</b>"])
        let comment = try #require((commented.json["comment"] as? [String: Any])?["id"] as? String)
        let commentNote = try anyone.get("/comments/\(comment)")
        #expect(commentNote.json["content"] as? String == "<p>Nice &lt;b&gt;one&lt;/b&gt;</p>")
        #expect(commentNote.json["inReplyTo"] as? String == "\(origin)/posts/\(post)")
        #expect(try anyone.get("/comments/not-a-uuid").status == 404)

        // Collections: the outbox has both of Ash's, the followers Blair once she follows.
        #expect(try blair.send("PUT", "/api/users/\(ashID)/follow").status == 200)
        let followers = try anyone.get("/ap/users/\(ashID)/followers").json
        #expect(followers["type"] as? String == "OrderedCollection" && followers["totalItems"] as? Int == 1)
        let page = try anyone.get("/ap/users/\(ashID)/followers?page=true").json
        #expect(page["orderedItems"] as? [String] == ["\(origin)/ap/users/\(blairID)"])
        let outbox = try anyone.get("/ap/users/\(ashID)/outbox?page=true").json["orderedItems"] as? [[String: Any]] ?? []
        #expect(outbox.map { $0["object"] as? String } == ["\(origin)/posts/\(post)"])

        // Deleted: a tombstone, 410.
        #expect(try blair.send("DELETE", "/api/posts/\(child)").status == 200)
        let gone = try anyone.get("/posts/\(child)")
        #expect(gone.status == 410 && gone.json["type"] as? String == "Tombstone")
        #expect(try anyone.get("/posts/999999").status == 404)
    }

    @Test func withoutFederation_noneOfItIsServed() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let anyone = try APIClient(port: app.server.port)
        #expect(try anyone.get("/.well-known/webfinger?resource=acct:a@b").status == 404)
        #expect(try anyone.get("/ap/users/1").status == 404)
    }

    @Test(arguments: [("maybe", "https://a.example"), ("on", nil), ("on", "ftp://a.example"), ("on", "https://a.example/path"),
                      ("on", "http://a.example")] as [(String, String?)])
    func badSettings_refuseToStart(federation: String, publicURL: String?) {
        #expect(throws: Configuration.Invalid.self) {
            try FederationSettings.parse(federation: federation, publicURL: publicURL, allowPrivate: nil)
        }
    }

    @Test func settings_giveTheDomainWithItsPortUnlessDefault() throws {
        let plain = try #require(try FederationSettings.parse(federation: "on", publicURL: "https://Social.Example:443/", allowPrivate: nil))
        #expect(plain.domain == "social.example" && plain.origin == "https://social.example")
        let ported = try #require(try FederationSettings.parse(federation: "on", publicURL: "http://127.0.0.1:8080", allowPrivate: "1"))
        #expect(ported.domain == "127.0.0.1:8080" && ported.origin == "http://127.0.0.1:8080")
        #expect(try FederationSettings.parse(federation: nil, publicURL: nil, allowPrivate: nil) == nil)
    }

    @Test func remoteHTML_becomesPlainText() {
        #expect(NoteContent.plainText(fromHTML: "<p>Hi <a href=\"x\">@ash</a> &amp; you</p><p>second<br/>line</p>")
            == "Hi @ash & you\nsecond\nline")
        #expect(NoteContent.plainText(fromHTML: "a &lt;b&gt; &#39;c&#x27; &bogus; <unclosed") == "a <b> 'c' &bogus; ")
    }
}
