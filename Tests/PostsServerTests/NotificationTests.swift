import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// Notifications end to end: every type for the right person and none for oneself, gone
/// when the act is undone, unread counts and marking read, paging, blocks and mutes, and
/// the private live stream with resume.
// One test at a time: each starts a server, and the whole run's thread count must stay
// under what `ServerConcurrencyTests` allows the process (it counts /proc/self's threads).
@Suite(.serialized) struct NotificationTests {
    /// The caller's notifications, newest first, as `(type, actor's username)`.
    static func kinds(of client: APIClient) throws -> [String] {
        let page = try client.get("/api/notifications?limit=100")
        #expect(page.status == 200, "\(page.text)")
        return (page.json["notifications"] as? [[String: Any]] ?? []).map { notification in
            let actor = (notification["actor"] as? [String: Any])?["username"] as? String ?? "?"
            return "\(notification["type"] as? String ?? "?") by \(actor)"
        }
    }

    /// The object's JSON with sorted keys: two objects equal as JSON are equal as text.
    static func canonical(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static func unread(of client: APIClient) throws -> Int? {
        try client.get("/api/notifications").json["unread_count"] as? Int
    }

    @Test func everyType_reachesItsRecipient_neverTheActor_andGoesWithTheUndo() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let cleo = try APIClient.user("cleo@example.com", on: app)
        let ashID = try ash.userID()
        let post = try ash.createPost("Ash's").id
        // One's own acts: nothing.
        #expect(try ash.send("PUT", "/api/posts/\(post)/like").status == 200)
        _ = try ThreadTests.comment(ash, on: post, "my own")
        #expect(try Self.kinds(of: ash).isEmpty)

        #expect(try blair.send("PUT", "/api/posts/\(post)/like").status == 200)
        let blairComment = try #require(try ThreadTests.comment(blair, on: post, "nice")["id"] as? String)
        let cleoComment = try #require(try ThreadTests.comment(cleo, on: post, "agreed")["id"] as? String)
        // A reply to Cleo's comment: Cleo's `comment.replied`, Ash's `post.commented`.
        _ = try ThreadTests.comment(blair, on: post, "indeed", replyTo: cleoComment)
        #expect(try blair.send("PUT", "/api/comments/\(cleoComment)/like").status == 200)
        let child = try blair.createPost("Blair's answer", parent: post).id
        // Named in a comment under one's own post: one notification, the mention.
        _ = try ThreadTests.comment(blair, on: post, "@ash look")
        _ = try blair.createPost("hi @Cleo")
        #expect(try blair.follow(ashID).status == 200)

        #expect(try Self.kinds(of: ash) == [
            "followed by blair", "mentioned by blair", "post.replied by blair", "post.commented by blair",
            "post.commented by cleo", "post.commented by blair", "post.liked by blair",
        ])
        #expect(try Self.kinds(of: cleo) == ["mentioned by blair", "comment.liked by blair", "comment.replied by blair"])
        #expect(try Self.kinds(of: blair).isEmpty)
        let listed = try #require(try ash.get("/api/notifications").json["notifications"] as? [[String: Any]])
        let liked = try #require(listed.last)
        #expect(liked["post_id"] as? Int == post && liked["read"] as? Bool == false && liked["id"] is Int)
        #expect(liked["comment_id"] is NSNull && liked["created_at"] is String)
        let commented = listed[listed.count - 2]
        #expect(commented["comment_id"] as? String == blairComment && commented["post_id"] as? Int == post)
        #expect((liked["actor"] as? [String: Any])?["followers_count"] as? Int == 0)

        // Undone: each goes with its act.
        #expect(try blair.send("DELETE", "/api/posts/\(post)/like").status == 200)
        #expect(try blair.follow(ashID, false).status == 200)
        #expect(try blair.send("DELETE", "/api/comments/\(blairComment)").status == 200)
        #expect(try blair.send("DELETE", "/api/posts/\(child)").status == 200)
        #expect(try blair.send("DELETE", "/api/comments/\(cleoComment)/like").status == 200)
        // Left: the mention, Blair's reply under Cleo's comment, Cleo's comment.
        #expect(try Self.kinds(of: ash) == ["mentioned by blair", "post.commented by blair", "post.commented by cleo"])
        #expect(try Self.kinds(of: cleo) == ["mentioned by blair", "comment.replied by blair"])
        // Cleo's comment goes with its reply: Cleo's `comment.replied` and Ash's for the reply.
        #expect(try cleo.send("DELETE", "/api/comments/\(cleoComment)").status == 200)
        #expect(try Self.kinds(of: ash) == ["mentioned by blair"])
        #expect(try Self.kinds(of: cleo) == ["mentioned by blair"])
        // A deleted account takes its notifications, given and received.
        #expect(try blair.send("DELETE", "/api/me").status == 200)
        #expect(try Self.kinds(of: ash).isEmpty && Self.kinds(of: cleo).isEmpty)
        #expect(try APIClient(port: app.server.port).get("/api/notifications").status == 401)
    }

    @Test func unreadCount_markRead_upToAnId_andPaging() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let ashID = try ash.userID()
        let fans = try (0..<5).map { try APIClient.user("fan\($0)@example.com", on: app) }
        for fan in fans { #expect(try fan.follow(ashID).status == 200) }
        #expect(try Self.unread(of: ash) == 5)
        let walked = try ash.walk("/api/notifications", "notifications", limit: 2)
        #expect(walked.compactMap { ($0["actor"] as? [String: Any])?["username"] as? String } == ["fan4", "fan3", "fan2", "fan1", "fan0"])
        let ids = walked.compactMap { $0["id"] as? Int }
        // Up to the third newest's id: it and the older ones (ids are in order of writing).
        let marked = try ash.send("POST", "/api/notifications/read", json: ["up_to": ids[2]])
        #expect(marked.status == 200 && marked.json["unread_count"] as? Int == 2, "\(marked.text)")
        let reads = try #require(try ash.get("/api/notifications").json["notifications"] as? [[String: Any]]).map { $0["read"] as? Bool }
        #expect(reads == [false, false, true, true, true])
        #expect(try ash.send("POST", "/api/notifications/read", json: [:]).json["unread_count"] as? Int == 0)
        #expect(try ash.send("POST", "/api/notifications/read", body: nil, contentType: nil).json["unread_count"] as? Int == 0)
        #expect(try ash.send("POST", "/api/notifications/read", json: ["up_to": "x"]).status == 400)
        #expect(try ash.send("POST", "/api/notifications/read", json: ["up_to": 0]).status == 422)
        #expect(try ash.get("/api/notifications?cursor=garbage").status == 400)
        #expect(try APIClient(port: app.server.port).send("POST", "/api/notifications/read", json: [:]).status == 401)
    }

    @Test func blocksAndMutes_keepNotificationsAway() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let ashID = try ash.userID()
        let blairID = try blair.userID()
        #expect(try blair.follow(ashID).status == 200)
        #expect(try Self.kinds(of: ash) == ["followed by blair"])
        // Muted: hidden from the list and the count, and back on unmute.
        #expect(try ash.send("PUT", "/api/users/\(blairID)/mute").status == 200)
        #expect(try Self.kinds(of: ash).isEmpty && Self.unread(of: ash) == 0)
        #expect(try ash.send("DELETE", "/api/users/\(blairID)/mute").status == 200)
        #expect(try Self.unread(of: ash) == 1)
        // Blocked: what came before is hidden, and a mention across it makes none.
        #expect(try ash.send("PUT", "/api/users/\(blairID)/block").status == 200)
        _ = try blair.createPost("hey @ash")
        #expect(try Self.kinds(of: ash).isEmpty && Self.unread(of: ash) == 0)
        #expect(try ash.send("DELETE", "/api/users/\(blairID)/block").status == 200)
        // The block removed the follow (and its notification); the mention made none.
        #expect(try Self.kinds(of: ash).isEmpty)
        _ = try blair.createPost("hey again @ash")
        #expect(try Self.kinds(of: ash) == ["mentioned by blair"])
    }

    @Test func stream_deliversTheCallersOwnAlone_asListed_andResumes() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let cleo = try APIClient.user("cleo@example.com", on: app)
        let ashID = try ash.userID()
        let cleoID = try cleo.userID()
        let mine = try EventStreamClient(port: app.server.port, path: "/api/notifications/events", headers: ash.headers)
        #expect(mine.head.status == 200 && mine.head.header("Content-Type") == "text/event-stream")
        let everyone = try EventStreamClient(port: app.server.port)
        _ = try mine.next()
        _ = try everyone.next()
        #expect(try blair.follow(cleoID).status == 200)
        #expect(try blair.follow(ashID).status == 200)
        // The public stream has both follows and no notification; Ash's only Ash's.
        #expect(try [everyone.nextChange().type, everyone.nextChange().type] == ["follow.changed", "follow.changed"])
        let first = try mine.nextChange()
        #expect(first.type == "notification")
        #expect(first.text.hasPrefix("id: \(first.id ?? "")\nevent: notification\ndata: {"))
        let list = try ash.get("/api/notifications")
        let listed = try #require((list.json["notifications"] as? [[String: Any]])?.first)
        #expect(try Self.canonical(first.json) == Self.canonical(listed))
        // Byte for byte: the stream's object (made in SQL from `NotificationShape`) is the
        // list's (written by the same shape in Swift).
        #expect(list.text.contains(try #require(first.data)))
        // Nor in /api/changes.
        let changes = try ChangeLogTests.changes(after: try #require(first.id), in: ash, count: 0)
        #expect(changes.isEmpty)
        // Resumed after the last one seen: what came meanwhile, then live.
        _ = try blair.createPost("for @ash")
        let resumed = try EventStreamClient(port: app.server.port, path: "/api/notifications/events",
                                            headers: ash.headers.merging(["Last-Event-ID": try #require(first.id)]) { $1 })
        _ = try resumed.next()
        #expect(try resumed.nextChange().json["type"] as? String == "mentioned")
        #expect(try blair.send("PUT", "/api/posts/\(try ash.createPost().id)/like").status == 200)
        #expect(try resumed.nextChange().json["type"] as? String == "post.liked")
        #expect(try EventStreamClient(port: app.server.port, path: "/api/notifications/events").head.status == 401)
    }
}
