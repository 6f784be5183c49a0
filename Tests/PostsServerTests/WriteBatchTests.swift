import Dispatch
import Foundation
import Postgres
import PostsServer
import Synchronization
import Testing
import TestSupport

/// Likes and comments of concurrent requests run as batches (`WriteCoalescer`), end to end:
/// each request gets its own answer and its own refusal (404, 403, 410) however its batch
/// went, the counters stay exact, each write records its change once, and two writes about
/// one post keep their order. Bursts repeat until `/metrics` shows batches of more than one
/// write (the first burst almost always does), so the batches are what is tested.
@Suite struct WriteBatchTests {
    /// One request of a burst: who sends what, and the status it must get.
    struct Shot: Sendable {
        let email: String
        let method: String
        let path: String
        let json: [String: any Sendable]?
        let expected: Int
    }

    /// Sends every shot at once, each from a thread and connection of its own (connected
    /// before the start); the statuses and answers, in the shots' order.
    private static func burst(_ shots: [Shot], port: Int) throws -> [RawHTTPClient.Response] {
        let clients = try shots.map { shot in
            let client = try APIClient(port: port, timeout: .seconds(30))
            client.headers["X-User-Email"] = shot.email
            return client
        }
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let answers = Mutex<[Int: RawHTTPClient.Response]>([:])
        for (index, shot) in shots.enumerated() {
            let client = clients[index]
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                start.wait()
                if let answer = try? client.send(shot.method, shot.path, json: shot.json?.mapValues { $0 as Any? }) {
                    answers.withLock { $0[index] = answer }
                }
            }
        }
        for _ in shots { start.signal() }
        #expect(done.wait(timeout: .now() + 60) == .success, "the burst is answered")
        let got = answers.withLock { $0 }
        return try shots.indices.map { try #require(got[$0], "shot \($0) got no answer") }
    }

    private static func batched(_ kind: String, _ probe: MetricsProbe) throws -> (batches: Double, writes: Double) {
        (try probe.value("write_batches_total{kind=\"\(kind)\"}") ?? 0, try probe.value("write_batched_total{kind=\"\(kind)\"}") ?? 0)
    }

    @Test func aBurstOfLikesAndComments_runsInBatches_eachWithItsOwnAnswer() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let port = app.server.port
        let probe = MetricsProbe(port: port)
        let author = try APIClient.user("author@example.com", on: app)
        // Refusals to share the bursts: a post across a block, a tombstone, none at all.
        let blocker = try APIClient.user("blocker@example.com", on: app)
        let blockedPost = try blocker.createPost("blocked").id
        #expect(try blocker.send("PUT", "/api/users/\(try APIClient.user("fan0@example.com", on: app).userID())/block").status == 200)
        // A deleted account's post under which another has posted stays as a tombstone.
        let leaver = try APIClient.user("leaver@example.com", on: app)
        let tombstone = try leaver.createPost("tombstone").id
        _ = try author.createPost("child", parent: tombstone)
        #expect(try leaver.send("DELETE", "/api/me").status == 200)
        #expect(try author.post(tombstone)?["deleted"] as? Bool == true)
        let fans = 24
        for attempt in 0..<5 {
            let posts = try (0..<fans).map { try author.createPost("round \(attempt) post \($0)").id }
            let since = try ChangeLogTests.position(author)
            var shots: [Shot] = []
            for fan in 0..<fans {
                shots.append(Shot(email: "fan\(fan)@example.com", method: "PUT", path: "/api/posts/\(posts[fan])/like", json: nil,
                                  expected: 200))
                shots.append(Shot(email: "fan\(fan)@example.com", method: "POST", path: "/api/posts/\(posts[(fan + 1) % fans])/comments",
                                  json: ["body": "comment \(fan)"], expected: 201))
            }
            // Two more likes of the first post: whatever batches they fall in, its count
            // ends at 3 and its changes say 1, 2, 3 in order.
            shots.append(Shot(email: "fan1@example.com", method: "PUT", path: "/api/posts/\(posts[0])/like", json: nil, expected: 200))
            shots.append(Shot(email: "fan2@example.com", method: "POST", path: "/api/posts/\(posts[0])/like/toggle", json: nil,
                              expected: 200))
            shots.append(Shot(email: "fan0@example.com", method: "PUT", path: "/api/posts/\(blockedPost)/like", json: nil, expected: 403))
            shots.append(Shot(email: "fan0@example.com", method: "POST", path: "/api/posts/\(blockedPost)/comments",
                              json: ["body": "across a block"], expected: 403))
            shots.append(Shot(email: "fan3@example.com", method: "PUT", path: "/api/posts/\(tombstone)/like", json: nil, expected: 410))
            shots.append(Shot(email: "fan4@example.com", method: "PUT", path: "/api/posts/999999/like", json: nil, expected: 404))
            shots.append(Shot(email: "fan5@example.com", method: "POST", path: "/api/posts/999999/comments",
                              json: ["body": "nowhere"], expected: 404))
            let before = (likes: try Self.batched("like", probe), comments: try Self.batched("comment", probe))
            let answers = try Self.burst(shots, port: port)
            for (shot, answer) in zip(shots, answers) {
                #expect(answer.status == shot.expected, "\(shot.method) \(shot.path) by \(shot.email): \(answer.text)")
            }
            for fan in 1..<fans {
                let like = answers[2 * fan]
                #expect(like.json["liked"] as? Bool == true && like.json["like_count"] as? Int == 1 && like.json["post_id"] as? Int == posts[fan])
            }
            for fan in 0..<fans {
                let comment = try #require(answers[2 * fan + 1].json["comment"] as? [String: Any])
                #expect(comment["body"] as? String == "comment \(fan)" && comment["post_id"] as? Int == posts[(fan + 1) % fans])
                #expect((comment["profile"] as? [String: Any])?["username"] as? String == "fan\(fan)")
            }
            let first = try #require(try author.post(posts[0]))
            #expect(first.int("like_count") == 3 && first.int("comment_count") == 1)
            let changes = try ChangeLogTests.changes(after: since, in: author, count: 3 * fans + 2)
            let likeCounts = changes.filter { $0["type"] as? String == "like.changed" && $0["post_id"] as? Int == posts[0] }
                .compactMap { $0["like_count"] as? Int }
            #expect(likeCounts == [1, 2, 3])
            let types = Dictionary(grouping: changes.compactMap { $0["type"] as? String }, by: { $0 }).mapValues(\.count)
            #expect(types["like.changed"] == fans + 2 && types["comment.created"] == fans, "\(types)")
            let after = (likes: try Self.batched("like", probe), comments: try Self.batched("comment", probe))
            let likesBatched = after.likes.writes - before.likes.writes > after.likes.batches - before.likes.batches
            let commentsBatched = after.comments.writes - before.comments.writes > after.comments.batches - before.comments.batches
            if likesBatched && commentsBatched { return }
        }
        Issue.record("five bursts and no batch of more than one like and one comment")
    }

    /// Half the callers of a burst moved on elsewhere (a mute made on another instance): the
    /// proofs their requests carry into a shared statement fail. Each such request runs again
    /// for its caller read afresh, the others' writes stand, and every like is made once.
    @Test func aCallerWhoseProofFails_inABatch_runsAgain_andTheOthersStand() throws {
        let database = try TestDatabase.makeDatabase()
        let here = try TestApplication.start(conninfo: database)
        defer { here.stop() }
        let there = try TestApplication.start(conninfo: database)
        defer { there.stop() }
        let probe = MetricsProbe(port: here.server.port)
        let author = try APIClient.user("author@example.com", on: here)
        let muted = try APIClient.user("muted@example.com", on: there).userID()
        let fans = 24
        for attempt in 0..<5 {
            let posts = try (0..<fans).map { try author.createPost("round \(attempt) post \($0)").id }
            // Remembered here; then the even fans' relations move on there.
            for fan in 0..<fans { _ = try APIClient.user("fan\(fan)@example.com", on: here).get("/api/me") }
            for fan in stride(from: 0, to: fans, by: 2) {
                let path = "/api/users/\(muted)/mute"
                let method = attempt % 2 == 0 ? "PUT" : "DELETE"
                #expect(try APIClient.user("fan\(fan)@example.com", on: there).send(method, path).status == 200)
            }
            let shots = (0..<fans).map {
                Shot(email: "fan\($0)@example.com", method: "PUT", path: "/api/posts/\(posts[$0])/like", json: nil, expected: 200)
            }
            let before = try Self.batched("like", probe)
            let answers = try Self.burst(shots, port: here.server.port)
            for (index, answer) in answers.enumerated() {
                #expect(answer.status == 200 && answer.json["like_count"] as? Int == 1, "fan \(index): \(answer.text)")
            }
            let rows: [Int] = try here.pool.withConnection { connection in
                try connection.query("""
                    SELECT (SELECT count(*)::int FROM likes l WHERE l.post_id = p.id) AS n FROM unnest(\(PostgresArray(posts.map(Int64.init)))) AS p(id)
                    """).rows.map { try $0.decode("n") }
            }
            #expect(rows == Array(repeating: 1, count: fans))
            let after = try Self.batched("like", probe)
            if after.writes - before.writes > after.batches - before.batches { return }
        }
        Issue.record("five bursts and no batch of more than one like")
    }

    /// Follows, then unfollows, in bursts: each fan its own idol (and one idol two fans, in
    /// two batches), refusals among them; answers, counters and changes as one at a time.
    @Test func aBurstOfFollowsAndUnfollows_runsInBatches_eachWithItsOwnAnswer() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let probe = MetricsProbe(port: app.server.port)
        let watcher = try APIClient.user("watcher@example.com", on: app)
        let blocker = try APIClient.user("blocker@example.com", on: app)
        let blockerID = try blocker.userID()
        #expect(try blocker.send("PUT", "/api/users/\(try APIClient.user("fan0@example.com", on: app).userID())/block").status == 200)
        let fans = 20
        for attempt in 0..<5 {
            let idols = try (0..<fans).map { try APIClient.user("idol\(attempt)-\($0)@example.com", on: app).userID() }
            let since = try ChangeLogTests.position(watcher)
            func shots(_ method: String) -> [Shot] {
                var shots = (0..<fans).map {
                    Shot(email: "fan\($0)@example.com", method: method, path: "/api/users/\(idols[$0])/follow", json: nil, expected: 200)
                }
                shots.append(Shot(email: "fan1@example.com", method: method, path: "/api/users/\(idols[0])/follow", json: nil,
                                  expected: 200))
                shots.append(Shot(email: "fan0@example.com", method: method, path: "/api/users/999999/follow", json: nil, expected: 404))
                if method == "PUT" {
                    shots.append(Shot(email: "fan0@example.com", method: method, path: "/api/users/\(blockerID)/follow", json: nil,
                                      expected: 403))
                }
                return shots
            }
            let before = (follows: try Self.batched("follow", probe), unfollows: try Self.batched("unfollow", probe))
            for method in ["PUT", "DELETE"] {
                let sent = shots(method)
                let answers = try Self.burst(sent, port: app.server.port)
                for (shot, answer) in zip(sent, answers) {
                    #expect(answer.status == shot.expected, "\(shot.method) \(shot.path) by \(shot.email): \(answer.text)")
                }
                for fan in 1..<fans {
                    #expect(answers[fan].json["following"] as? Bool == (method == "PUT")
                            && answers[fan].json["followers_count"] as? Int == (method == "PUT" ? 1 : 0), "\(answers[fan].text)")
                }
            }
            let counts: [Int] = try app.pool.withConnection { connection in
                try connection.query("""
                    SELECT followers_count + (SELECT count(*)::int FROM follows f WHERE f.followee_id = p.user_id) AS n
                    FROM profiles p WHERE p.user_id = ANY(\(PostgresArray(idols.map(Int64.init))))
                    """).rows.map { try $0.decode("n") }
            }
            #expect(counts == Array(repeating: 0, count: fans), "counters and rows back to none")
            let changes = try ChangeLogTests.changes(after: since, in: watcher, count: 2 * (fans + 1))
            let follows = changes.filter { $0["type"] as? String == "follow.changed" }
            #expect(follows.count == 2 * (fans + 1), "\(follows.count)")
            let onIdol0 = follows.filter { $0["followee_id"] as? Int == idols[0] }.compactMap { $0["followers_count"] as? Int }
            #expect(onIdol0.count == 4 && onIdol0.first == 1 && onIdol0.last == 0, "\(onIdol0)")
            let after = (follows: try Self.batched("follow", probe), unfollows: try Self.batched("unfollow", probe))
            if after.follows.writes - before.follows.writes > after.follows.batches - before.follows.batches
                && after.unfollows.writes - before.unfollows.writes > after.unfollows.batches - before.unfollows.batches { return }
        }
        Issue.record("five bursts and no batch of more than one follow and one unfollow")
    }

    /// Comments, likes and child posts on a few posts at once: the batches wait for posts'
    /// locks that other writes hold and change the rows meanwhile; every counter still
    /// equals its rows.
    @Test func batchesOnPostsOthersChange_keepEveryCounterExact() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let author = try APIClient.user("author@example.com", on: app)
        let posts = try (0..<4).map { try author.createPost("hot \($0)").id }
        var shots: [Shot] = []
        for fan in 0..<24 {
            let post = posts[fan % posts.count]
            shots.append(Shot(email: "fan\(fan)@example.com", method: "POST", path: "/api/posts/\(post)/comments",
                              json: ["body": "comment \(fan)"], expected: 201))
            shots.append(Shot(email: "fan\(fan)@example.com", method: "PUT", path: "/api/posts/\(post)/like", json: nil, expected: 200))
            shots.append(Shot(email: "fan\(fan)@example.com", method: "POST", path: "/api/posts",
                              json: ["title": "child \(fan)", "summary": "s", "body": "b", "parent_id": post], expected: 201))
        }
        let answers = try Self.burst(shots, port: app.server.port)
        for (shot, answer) in zip(shots, answers) {
            #expect(answer.status == shot.expected, "\(shot.method) \(shot.path): \(answer.text)")
        }
        let drifted: [Int64] = try app.pool.withConnection { connection in
            try connection.query("""
                SELECT p.id FROM posts p WHERE p.id = ANY(\(PostgresArray(posts.map(Int64.init))))
                  AND (p.like_count <> (SELECT count(*) FROM likes l WHERE l.post_id = p.id) OR p.like_count <> 6
                       OR p.comment_count <> (SELECT count(*) FROM comments c WHERE c.post_id = p.id) OR p.comment_count <> 6
                       OR p.child_count <> (SELECT count(*) FROM posts k WHERE k.parent_id = p.id) OR p.child_count <> 6)
                """).rows.map { try $0.decode("id") }
        }
        #expect(drifted.isEmpty, "counters off their rows: \(drifted)")
    }
}
