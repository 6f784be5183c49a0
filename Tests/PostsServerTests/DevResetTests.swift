import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// `POST /api/dev/reset`: a clean slate between an app's test runs.
@Suite struct DevResetTests {
    @Test func reset_emptiesEveryTableAndTheStoredImages_andStreamsGoOn() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        var form = MultipartBody()
        for (name, value) in [("title", "With an image"), ("summary", "s"), ("body", "b")] { form.field(name, value) }
        form.file("image", filename: "image.jpg", type: "image/jpeg", jpegBytes(size: 2048))
        let created = try ash.send("POST", "/api/posts", body: form.finished, contentType: MultipartBody.contentType)
        #expect(created.status == 201, "\(created.text)")
        let post = try #require(created.json["post"] as? [String: Any])
        #expect(try ash.send("PUT", "/api/posts/\(post.id)/like").status == 200)
        #expect(try ash.send("POST", "/api/posts/\(post.id)/comments", json: ["body": "hi"]).status == 201)
        _ = try ash.send("POST", "/api/auth/send-code", json: ["email": "ash@example.com"])
        let folder = app.configuration.uploadDirectory
        let bystander = (folder as NSString).appendingPathComponent("notes.txt")
        try Data("not an upload".utf8).write(to: URL(fileURLWithPath: bystander))
        let events = try EventStreamClient(port: app.server.port)
        _ = try events.next()

        let reset = try APIClient(port: app.server.port).send("POST", "/api/dev/reset")
        #expect(reset.status == 200)
        #expect(reset.text == #"{"status":"success"}"#)

        let filled: [String] = try app.pool.withConnection { connection in
            let tables: [String] = try connection.query("""
                SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'
                """).rows.map { try $0.decode("tablename") }
            return try tables.filter { table in
                let count: Int64 = try connection.query("""
                    SELECT count(*) AS n FROM \(unsafeSQL: "\"" + table + "\"")
                    """).first!.decode("n")
                return count > 0
            }
        }
        #expect(filled.isEmpty, "still holding rows: \(filled)")
        let migrations: Int64 = try app.pool.withConnection { try $0.query("SELECT count(*) AS n FROM schema_migrations").first!.decode("n") }
        #expect(migrations > 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(left == ["notes.txt"], "\(left)")

        // The app starts again from nothing; an open stream sees what comes after.
        let fresh = try ash.createPost("after the reset")
        #expect(fresh.id == 1)
        let event = try events.nextChange()
        #expect((event.json["post"] as? [String: Any])?["title"] as? String == "after the reset")
    }

    @Test func reset_isNotFoundInTokenMode() throws {
        let app = try TestApplication.start { $0.authMode = .token }
        defer { app.stop() }
        #expect(try APIClient(port: app.server.port).send("POST", "/api/dev/reset").status == 404)
    }
}
