import Foundation
import Synchronization
@testable import PostsServer
import Testing
import TestSupport

/// API.md "Federation" against an independent implementation (`TestActivityPubPeer`:
/// bovine's HTTP Signatures, in Python): it must verify our signatures with its code, and
/// we must verify its. A follow, a post, a reply and a like cross both ways.
@Suite struct FederationPeerTests {
    @Test func followPostReplyAndLike_crossBothWays_withAnIndependentImplementation() throws {
        let app = try FederatedInstance.start()
        defer { app.stop() }
        let peer = try TestActivityPubPeer()
        defer { peer.stop() }
        let origin = "http://\(FederatedInstance.domain(of: app))"
        let (ash, ashActor) = try FederationInboxTests.local("ash@example.com", on: app)
        let ashID = try ash.userID()
        let ashInbox = try #require(try APIClient(port: app.server.port).get("/ap/users/\(ashID)").json["inbox"] as? String)

        // The peer follows Ash: we check bovine's signature, and it checks our Accept's.
        let follow: [String: Any] = ["id": peer.newID("follows"), "type": "Follow", "object": ashActor]
        #expect(try peer.send(follow, to: ashInbox) == 202)
        #expect(try eventually { try ash.get("/api/profiles/\(ashID)").json["profile"].flatMap { $0 as? [String: Any] }?["followers_count"] as? Int == 1 })
        let accept = try #require(try eventuallyValue(timeout: .seconds(30)) { peer.received("Accept") })
        #expect(accept.verified, "bovine refused our signature on the Accept: \(peer.log)")
        #expect((accept.activity["object"] as? [String: Any])?["id"] as? String == follow["id"] as? String)

        // Ash posts: the peer receives the Create, signed so that bovine verifies it.
        let post = try ash.createPost("To the fediverse", extra: ["body": "Hello <peer> & all"]).id
        let create = try #require(try eventuallyValue(timeout: .seconds(30)) { peer.received("Create") })
        #expect(create.verified)
        let note = try #require(create.activity["object"] as? [String: Any])
        #expect(note["id"] as? String == "\(origin)/posts/\(post)" && note["attributedTo"] as? String == ashActor)
        #expect((note["content"] as? String)?.contains("Hello &lt;peer&gt; &amp; all") == true)

        // The peer replies and likes: a comment and a like here.
        let reply: [String: Any] = ["id": peer.newID("activities"), "type": "Create", "object": [
            "id": peer.newID("notes"), "type": "Note", "attributedTo": peer.actorID, "inReplyTo": "\(origin)/posts/\(post)",
            "content": "<p>Hi <b>Ash</b> &amp; welcome</p>", "to": [ActivityPub.publicCollection],
        ] as [String: Any]]
        #expect(try peer.send(reply, to: "\(origin)/inbox") == 202)
        let like: [String: Any] = ["id": peer.newID("likes"), "type": "Like", "object": "\(origin)/posts/\(post)"]
        #expect(try peer.send(like, to: "\(origin)/inbox") == 202)
        #expect(try ash.post(post)?.int("comment_count") == 1 && ash.post(post)?.int("like_count") == 1)
        let comments = try ash.get("/api/posts/\(post)/comments").json["comments"] as? [[String: Any]] ?? []
        #expect(comments.first?["body"] as? String == "Hi Ash & welcome")
        // Delivered twice: applied once.
        #expect(try peer.send(like, to: "\(origin)/inbox") == 202)
        #expect(try ash.post(post)?.int("like_count") == 1)

        // Ash follows the peer (found through its WebFinger); it accepts; its post reaches Ash's feed.
        let found = try ash.get("/api/profiles/@\(peer.acct)")
        #expect(found.status == 200, "\(found.text)")
        let peerHere = try #require((found.json["profile"] as? [String: Any])?["user_id"] as? Int)
        #expect(try ash.send("PUT", "/api/users/\(peerHere)/follow").json["pending"] as? Bool == true)
        let sentFollow = try #require(try eventuallyValue(timeout: .seconds(30)) { peer.received("Follow") })
        #expect(sentFollow.verified)
        #expect(try eventually { try ash.send("PUT", "/api/users/\(peerHere)/follow").json["pending"] == nil })
        let peerNote = peer.newID("notes")
        let peerPost: [String: Any] = ["id": peer.newID("activities"), "type": "Create", "object": [
            "id": peerNote, "type": "Note", "attributedTo": peer.actorID, "content": "<p>A post from bovine</p><p>Second line</p>",
            "to": [ActivityPub.publicCollection],
        ] as [String: Any]]
        #expect(try peer.send(peerPost, to: "\(origin)/inbox") == 202)
        // Into the feed by its fan-out job, a moment after.
        let copy = try #require(try eventuallyValue(timeout: .seconds(30)) { () -> [String: Any]? in
            (try ash.get("/api/feed").json["posts"] as? [[String: Any]])?.first { $0["title"] as? String == "A post from bovine" }
        })
        #expect(copy["body"] as? String == "A post from bovine\nSecond line")

        // Ash replies and likes: the peer receives both, verified.
        #expect(try ash.send("POST", "/api/posts/\(copy.id)/comments", json: ["body": "Hello bovine"]).status == 201)
        #expect(try ash.send("PUT", "/api/posts/\(copy.id)/like").status == 200)
        let replied = try #require(try eventuallyValue(timeout: .seconds(30)) {
            peer.received("Create") { ($0["object"] as? [String: Any])?["inReplyTo"] as? String == peerNote }
        })
        #expect(replied.verified)
        #expect((replied.activity["object"] as? [String: Any])?["content"] as? String == "<p>Hello bovine</p>")
        let liked = try #require(try eventuallyValue(timeout: .seconds(30)) { peer.received("Like") })
        #expect(liked.verified && liked.activity["object"] as? String == peerNote)
        let refused = peer.received().filter { !$0.verified }.map { $0.activity["type"] as? String ?? "?" }
        #expect(refused.isEmpty, "bovine refused our \(refused)")
    }
}

/// Edits, deletions and blocks, both ways, with the independent implementation.
@Suite struct FederationPeerEditsTests {
    @Test func editsDeletionsAndBlocks_crossBothWays() throws {
        let app = try FederatedInstance.start()
        defer { app.stop() }
        let peer = try TestActivityPubPeer()
        defer { peer.stop() }
        let origin = "http://\(FederatedInstance.domain(of: app))"
        let (ash, ashActor) = try FederationInboxTests.local("ash@example.com", on: app)
        let ashID = try ash.userID()
        // Each follows the other.
        #expect(try peer.send(["id": peer.newID("follows"), "type": "Follow", "object": ashActor], to: "\(origin)/inbox") == 202)
        let peerHere = try #require((try ash.get("/api/profiles/@\(peer.acct)").json["profile"] as? [String: Any])?["user_id"] as? Int)
        #expect(try ash.send("PUT", "/api/users/\(peerHere)/follow").status == 200)
        #expect(try eventually { try ash.send("PUT", "/api/users/\(peerHere)/follow").json["pending"] == nil })

        // The peer posts, then edits its note: the copy here follows.
        let noteID = peer.newID("notes")
        func note(_ content: String) -> [String: Any] {
            ["id": noteID, "type": "Note", "attributedTo": peer.actorID, "content": content, "to": [ActivityPub.publicCollection]]
        }
        #expect(try peer.send(["id": peer.newID("activities"), "type": "Create", "object": note("<p>First words</p>")],
                              to: "\(origin)/inbox") == 202)
        let copy = try #require(try eventuallyValue(timeout: .seconds(30)) {
            (try ash.get("/api/feed").json["posts"] as? [[String: Any]])?.first?["id"] as? Int
        })
        #expect(try peer.send(["id": peer.newID("activities"), "type": "Update", "object": note("<p>Better words</p>")],
                              to: "\(origin)/inbox") == 202)
        #expect(try ash.post(copy)?["body"] as? String == "Better words")

        // Ash edits and deletes her post: the peer receives both, verified.
        let post = try ash.createPost("Draft").id
        #expect(try ash.send("PATCH", "/api/posts/\(post)", json: ["title": "Final"]).status == 200)
        let update = try #require(try eventuallyValue(timeout: .seconds(30)) { peer.received("Update") })
        #expect(update.verified && ((update.activity["object"] as? [String: Any])?["content"] as? String)?.hasPrefix("<p>Final</p>") == true)
        #expect(try ash.send("DELETE", "/api/posts/\(post)").status == 200)
        let delete = try #require(try eventuallyValue(timeout: .seconds(30)) { peer.received("Delete") })
        #expect(delete.verified && (delete.activity["object"] as? [String: Any])?["id"] as? String == "\(origin)/posts/\(post)")
        #expect(try APIClient(port: app.server.port).get("/posts/\(post)").status == 410)

        // The peer deletes its note: the copy goes.
        #expect(try peer.send(["id": peer.newID("activities"), "type": "Delete", "object": noteID], to: "\(origin)/inbox") == 202)
        #expect(try ash.get("/api/posts/\(copy)").status == 404)

        // Ash blocks the peer: a Block, and the end of her follow (an Undo).
        #expect(try ash.send("PUT", "/api/users/\(peerHere)/block").status == 200)
        let block = try #require(try eventuallyValue(timeout: .seconds(30)) { peer.received("Block") })
        #expect(block.verified && block.activity["object"] as? String == peer.actorID)
        let undo = try #require(try eventuallyValue(timeout: .seconds(30)) { peer.received("Undo") })
        #expect(undo.verified && (undo.activity["object"] as? [String: Any])?["type"] as? String == "Follow")
        // Blocked: its like is not counted.
        let mine = try ash.createPost("After the block").id
        #expect(try peer.send(["id": peer.newID("likes"), "type": "Like", "object": "\(origin)/posts/\(mine)"], to: "\(origin)/inbox") == 202)
        #expect(try ash.post(mine)?.int("like_count") == 0)

        // The peer's account deletes itself: gone here too.
        #expect(try peer.send(["id": peer.newID("activities"), "type": "Delete", "object": peer.actorID], to: "\(origin)/inbox") == 202)
        #expect(try ash.get("/api/profiles/\(peerHere)").status == 404)
    }
}

/// The inbox's share of the server (API.md "Safety"): `limit` at work, as many waiting,
/// the rest refused at once.
@Suite struct InboxGateTests {
    @Test func pastItsShare_aRequestIsRefusedAtOnce() throws {
        let gate = InboxGate(limit: 1)
        let inside = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = gate.run { inside.signal(); release.wait() }
            done.signal()
        }
        inside.wait()
        // One waits its turn (it gets it once the first is done)…
        let waiter = Atomic<Int>(0)
        DispatchQueue.global().async {
            if gate.run({ 1 }) != nil { waiter.store(1, ordering: .relaxed) } else { waiter.store(2, ordering: .relaxed) }
            done.signal()
        }
        // …and a third, past both, is refused without waiting.
        #expect(eventually { gate.occupancy == 2 })
        #expect(gate.run({ 1 }) == nil)
        release.signal()
        done.wait()
        done.wait()
        #expect(waiter.load(ordering: .relaxed) == 1)
    }
}
