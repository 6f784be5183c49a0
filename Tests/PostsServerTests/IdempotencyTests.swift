import Dispatch
import Foundation
import PostsServer
import Synchronization
import Testing
import TestSupport

/// `Idempotency-Key` on creates: a retry from a flaky mobile network makes one post.
@Suite struct IdempotencyTests {
    private static var fields: [String: Any?] { ["title": "Once", "summary": "s", "body": "b"] }

    private static func postCount(_ app: Application) throws -> Int {
        try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM posts").first!.decode("n") }
    }

    @Test func retriedCreate_answersTheFirstAnswerAgain_andCreatesOnce() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let key = ["Idempotency-Key": "retry-7f3a"]
        let first = try ash.send("POST", "/api/posts", json: Self.fields, headers: key)
        let second = try ash.send("POST", "/api/posts", json: Self.fields, headers: key)
        #expect(first.status == 201 && second.status == 201)
        #expect(first.body == second.body)
        #expect(try Self.postCount(app) == 1)

        let changed = try ash.send("POST", "/api/posts", json: ["title": "Other", "summary": "s", "body": "b"], headers: key)
        #expect(changed.status == 422)
        // Keys belong to their user: another user's same key is a new request.
        let blair = try APIClient.user("blair@example.com", on: app)
        #expect(try blair.send("POST", "/api/posts", json: Self.fields, headers: key).status == 201)
        #expect(try Self.postCount(app) == 2)
        #expect(try ash.send("POST", "/api/posts", json: Self.fields, headers: ["Idempotency-Key": ""]).status == 400)
    }

    /// The key lives in the database: a retry after a restart still gets the first answer.
    @Test func keys_surviveARestart_andTheFireflyFormHonoursThem() throws {
        let database = try TestDatabase.makeDatabase()
        var form = MultipartBody()
        for (name, value) in [("email", "ash@example.com"), ("title", "t"), ("summary", "s"), ("body", "b")] {
            form.field(name, value)
        }
        var answers: [[UInt8]] = []
        for _ in 0..<2 {
            let app = try TestApplication.start(conninfo: database)
            let client = try APIClient(port: app.server.port)
            let response = try client.send("POST", "/api/posts/create", body: form.finished, contentType: MultipartBody.contentType,
                                           headers: ["Idempotency-Key": "form-1"])
            #expect(response.status == 201)
            answers.append(response.body)
            #expect(try Self.postCount(app) == 1)
            app.stop()
        }
        #expect(answers[0] == answers[1])
    }

    /// While the first request with a key still runs, the others get 409 and Retry-After;
    /// whatever the timing, exactly one post is made and every 201 is the same answer.
    @Test func concurrentRetries_makeOnePost() throws {
        let app = try TestApplication.start { $0.databasePoolSize = 6 }
        defer { app.stop() }
        let answers = Mutex<[RawHTTPClient.Response]>([])
        DispatchQueue.concurrentPerform(iterations: 12) { _ in
            guard let client = try? APIClient.user("ash@example.com", on: app),
                  let response = try? client.send("POST", "/api/posts", json: Self.fields,
                                                  headers: ["Idempotency-Key": "storm"]) else { return }
            answers.withLock { $0.append(response) }
        }
        let all = answers.withLock { $0 }
        #expect(all.count == 12)
        let created = all.filter { $0.status == 201 }
        #expect(!created.isEmpty && created.allSatisfy { $0.body == created[0].body })
        #expect(all.allSatisfy { $0.status == 201 || ($0.status == 409 && $0.header("Retry-After") == "1") })
        #expect(try Self.postCount(app) == 1)
    }
}
