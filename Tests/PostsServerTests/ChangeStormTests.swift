import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// API.md: a client that always passes back `next_since` sees every change after its cursor
/// exactly once, "even when concurrent transactions commit out of the order they started".
/// A storm of concurrent writers of every kind (posts, child posts, comments, likes given and
/// taken back on a few hot posts) while one reader follows `/api/changes`; afterwards a walk
/// from the same cursor is the truth the reader must have seen, change for change, in the
/// same order.
@Suite struct ChangeStormTests {
    static let writers = 40
    static let writesPerWriter = 30
    static let rounds = 4

    @Test func aFollowerOfChanges_missesNothing_underConcurrentWriters() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let port = app.server.port
        let author = try APIClient.user("storm0@example.com", on: app)
        let hot = try (0..<8).map { try author.createPost("hot \($0)").id }
        // Every write below records exactly one public change (a comment's notification is
        // its recipient's private one): the count the readers must reach.
        let expected = Self.writers * Self.writesPerWriter
        // Each writer's likes, kept across rounds: it likes or unlikes as it stands.
        let books = (0..<Self.writers).map { _ in LikeBook() }
        for round in 0..<Self.rounds {
            let start = try ChangeLogTests.position(author)
            // One reader anonymous, one signed in (its pages carry the caller's proof).
            let readers = [Reader(port: port, since: start, email: nil), Reader(port: port, since: start, email: "reader@example.com")]
            let readersDone = DispatchGroup()
            for reader in readers {
                readersDone.enter()
                Thread.detachNewThread {
                    defer { readersDone.leave() }
                    reader.follow(until: expected)
                }
            }
            let writers = DispatchGroup()
            let failures = Failures()
            for writer in 0..<Self.writers {
                writers.enter()
                Thread.detachNewThread {
                    defer { writers.leave() }
                    do { try Self.write(as: writer, round: round, hot: hot, likes: books[writer], port: port) } catch {
                        failures.add("\(error)")
                    }
                }
            }
            #expect(writers.wait(timeout: .now() + 120) == .success, "the writers finish")
            #expect(failures.all.isEmpty, "\(failures.all.prefix(3))")
            #expect(readersDone.wait(timeout: .now() + 90) == .success, "the readers catch up")

            let walk = try ChangeLogTests.changes(after: start, in: author, count: expected)
            // The hot posts' counters against their rows: every write that waited for a hot
            // post's lock found its row changed meanwhile, and must still have moved it.
            let drifted: [Int64] = try app.pool.withConnection { connection in
                try connection.query("""
                    SELECT p.id FROM posts p WHERE p.id = ANY(\(PostgresArray(hot.map(Int64.init))))
                      AND (p.like_count <> (SELECT count(*) FROM likes l WHERE l.post_id = p.id)
                           OR p.comment_count <> (SELECT count(*) FROM comments c WHERE c.post_id = p.id)
                           OR p.child_count <> (SELECT count(*) FROM posts k WHERE k.parent_id = p.id))
                    """).rows.map { try $0.decode("id") }
            }
            #expect(drifted.isEmpty, "round \(round): counters off their rows on hot posts \(drifted)")
            let truth = walk.compactMap { $0["seq"] as? String }
            #expect(truth.count == expected, "round \(round): the storm recorded one change a write; \(Self.surplus(in: walk))")
            for reader in readers {
                let seen = reader.seen
                let missed = Set(truth).subtracting(seen)
                #expect(missed.isEmpty && seen == truth, """
                    round \(round), \(reader.name): \(truth.count) changes, it saw \(seen.count) (\(Set(seen).count) distinct); \
                    missed \(missed.sorted().prefix(5)); pages over them: \(reader.pages(over: missed).prefix(5))
                    """)
                #expect(reader.error == nil, "\(reader.name): \(reader.error ?? "")")
            }
        }
    }

    /// A writer's share: a post, a child of a hot post, a comment on one, a like given or
    /// taken back on one. Each write is sent again, as a client would, on a 503 (the server
    /// shedding load, or a database answer that did not come in time: a write that may have
    /// committed all the same) and on a 409 for its Idempotency-Key still running; so each
    /// is one that a retry cannot make twice: creates carry an Idempotency-Key, and a like
    /// is a PUT or a DELETE, never a toggle.
    private static func write(as writer: Int, round: Int, hot: [Int], likes: LikeBook, port: Int) throws {
        var client = try APIClient(port: port, timeout: .seconds(30))
        client.headers["X-User-Email"] = "storm\(writer)@example.com"
        for index in 0..<writesPerWriter {
            let post = hot[(writer * 7 + index * 3 + round) % hot.count]
            let key = "storm-\(round)-\(writer)-\(index)"
            let liking = !(likes.liked[post] ?? false)
            let response = try eventuallyValue(timeout: .seconds(60)) { () throws -> RawHTTPClient.Response? in
                let response: RawHTTPClient.Response
                client.headers["Idempotency-Key"] = index % 4 == 3 ? nil : key
                switch index % 4 {
                case 0: response = try client.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b"])
                case 1: response = try client.send("POST", "/api/posts", json: ["title": "c", "summary": "s", "body": "b", "parent_id": post])
                case 2: response = try client.send("POST", "/api/posts/\(post)/comments", json: ["body": "hi"])
                default: response = try client.send(liking ? "PUT" : "DELETE", "/api/posts/\(post)/like")
                }
                if response.status == 409 && response.text.contains("still running") { return nil }
                if response.status == 503 {
                    // A shed answer may close the connection: the next try comes on a new one.
                    client = try APIClient(port: port, timeout: .seconds(30))
                    client.headers["X-User-Email"] = "storm\(writer)@example.com"
                    return nil
                }
                return response
            }
            guard let response, (200..<300).contains(response.status) else {
                throw StormError.refused(response?.status ?? 503, response?.text ?? "503 for a minute")
            }
            if index % 4 == 3 { likes.liked[post] = liking }
        }
    }

    /// What a walk holds beyond one change a write, for the failure's message: the count of
    /// each type, the users with more creates than their share, and every like that repeats
    /// the state before it (a like given twice, or taken back twice, with nothing between).
    static func surplus(in walk: [[String: Any]]) -> String {
        var types: [String: Int] = [:]
        var creates: [String: Int] = [:]
        var likes: [String: [Bool]] = [:]
        var details: [String] = []
        for change in walk {
            let type = change["type"] as? String ?? "?"
            types[type, default: 0] += 1
            let user = change["user_id"] as? Int ?? 0
            let post = change["post_id"] as? Int ?? 0
            if type == "post.created" || type == "comment.created" { creates["\(type) by \(user)", default: 0] += 1 }
            if type == "like.changed", let liked = change["liked"] as? Bool {
                let key = "user \(user) post \(post)"
                if likes[key]?.last == liked { details.append("\(key) liked \(liked) twice (seq \(change["seq"] ?? "?"), at \(change["at"] ?? "?"))") }
                likes[key, default: []].append(liked)
            }
        }
        // A writer's share of 30 writes: 8 posts and 8 child posts (index % 4 of 0 and 1), 7 comments.
        let over = creates.filter { $0.key.hasPrefix("comment") ? $0.value > 7 : $0.value > 16 }
        return "types \(types.sorted { $0.key < $1.key }); over their share \(over.sorted { $0.key < $1.key }); \(details.prefix(10))"
    }

    private enum StormError: Error {
        case refused(Int, String)
    }

    /// Follows `/api/changes` from a cursor, as an offline-first app does, until the writers
    /// are done and a page comes back empty; keeps every page's cursor and answer.
    final class Reader: @unchecked Sendable {
        struct Page {
            let since: String
            let next: String
            let count: Int
            let hasMore: Bool
        }

        private let lock = NSLock()
        private let port: Int
        private let email: String?
        private var since: String
        private(set) var seen: [String] = []
        private var log: [Page] = []
        private(set) var error: String?

        init(port: Int, since: String, email: String?) {
            self.port = port
            self.since = since
            self.email = email
        }

        var name: String { email.map { "the reader signed in as \($0)" } ?? "the anonymous reader" }

        /// Until it has seen `expected` changes and a page after them is empty (bounded: 90 s).
        func follow(until expected: Int) {
            do {
                let client = try APIClient(port: port, timeout: .seconds(30))
                if let email { client.headers["X-User-Email"] = email }
                let deadline = ContinuousClock.now + .seconds(90)
                while ContinuousClock.now < deadline {
                    let page = try client.get("/api/changes?since=\(since)&limit=100")
                    if page.status == 503 { continue }  // shed under load: read the same page again
                    guard page.status == 200 else { throw StormError.refused(page.status, page.text) }
                    let changes = page.json["changes"] as? [[String: Any]] ?? []
                    let next = try #require(page.json["next_since"] as? String)
                    let hasMore = page.json["has_more"] as? Bool ?? false
                    let count = lock.withLock {
                        seen += changes.compactMap { $0["seq"] as? String }
                        log.append(Page(since: since, next: next, count: changes.count, hasMore: hasMore))
                        return seen.count
                    }
                    since = next
                    if count >= expected && changes.isEmpty && !hasMore { return }
                }
                throw StormError.refused(0, "saw \(seen.count) of \(expected) changes in 90 s")
            } catch {
                lock.withLock { self.error = "\(error)" }
            }
        }

        /// The pages whose (since, next] window held one of `keys`: the page that passed it by.
        func pages(over keys: Set<String>) -> [String] {
            let wanted = keys.compactMap { try? ChangeKey($0) }
            return lock.withLock {
                log.compactMap { page -> String? in
                    guard let from = try? ChangeKey(page.since), let to = try? ChangeKey(page.next),
                          wanted.contains(where: { from < $0 && $0 <= to }) else { return nil }
                    return "(\(from.txid),\(from.position)) -> (\(to.txid),\(to.position)): \(page.count) changes, more \(page.hasMore)"
                }
            }
        }
    }

    /// One writer's likes of the hot posts (only its own thread touches it).
    final class LikeBook: @unchecked Sendable {
        var liked: [Int: Bool] = [:]
    }

    final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [String] = []
        func add(_ value: String) { lock.withLock { values.append(value) } }
        var all: [String] { lock.withLock { values } }
    }
}
