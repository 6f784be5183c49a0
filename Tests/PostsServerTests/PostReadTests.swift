import Foundation
import PostsServer
import Testing
import TestSupport

/// Reading posts: single posts, pages, children, ancestors and their errors.
@Suite struct PostReadTests {
    @Test func createdPost_readsBackWithEveryField() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let created = try ash.createPost("  Hello  ", extra: ["timezone": "Europe/Paris", "location_tag": "Lisbon",
                                                               "ai_generated": true])
        #expect(created["title"] as? String == "Hello")
        #expect(created["timezone"] as? String == "Europe/Paris" && created["location_tag"] as? String == "Lisbon")
        #expect(created["ai_generated"] as? Bool == true && created["author_name"] as? String == "ash")
        #expect(created["parent_id"] is NSNull && created["image_url"] is NSNull)
        #expect(created.int("child_count") == 0 && created.int("like_count") == 0 && created.int("comment_count") == 0)
        #expect(created["liked_by_me"] as? Bool == false)
        #expect((created["created_at"] as? String)?.firstMatch(of: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) != nil)

        let anonymous = try APIClient(port: app.server.port)
        let read = try #require(try anonymous.post(created.id))
        #expect(read["title"] as? String == "Hello" && read["user_id"] as? Int == created["user_id"] as? Int)
        // liked_by_me only on authenticated requests.
        #expect(read["liked_by_me"] == nil)
        #expect(try ash.post(created.id)?["liked_by_me"] as? Bool == false)
        #expect(try anonymous.get("/api/posts/999999").status == 404)
        #expect(try anonymous.get("/api/posts/abc").status == 404)
    }

    @Test func tree_countsChildrenAndListsThemAndTheWayUp() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let root = try ash.createPost("root")
        let child = try ash.createPost("child", parent: root.id)
        let grandchild = try ash.createPost("grandchild", parent: child.id)
        _ = try ash.createPost("second child", parent: root.id)
        _ = try ash.createPost("another root")

        #expect(try ash.post(root.id)?.int("child_count") == 2)
        #expect(try ash.post(child.id)?.int("child_count") == 1)

        let children = try ash.get("/api/posts/\(root.id)/children")
        #expect(children.json["post_id"] as? Int == root.id)
        #expect((children.json["children"] as? [[String: Any]])?.map { $0["title"] as? String } == ["second child", "child"])
        #expect(children.json["count"] as? Int == 2 && children.json["next_cursor"] is NSNull)

        let none = try ash.get("/api/posts/\(grandchild.id)/children")
        #expect(none.status == 200 && (none.json["children"] as? [Any])?.isEmpty == true && none.json["count"] as? Int == 0)
        #expect(try ash.get("/api/posts/999999/children").status == 404)

        let ancestors = try ash.get("/api/posts/\(grandchild.id)/ancestors")
        #expect((ancestors.json["ancestors"] as? [[String: Any]])?.map { $0["title"] as? String } == ["root", "child"])
        #expect(((try ash.get("/api/posts/\(root.id)/ancestors")).json["ancestors"] as? [Any])?.isEmpty == true)
        #expect(try ash.get("/api/posts/999999/ancestors").status == 404)

        let roots = try ash.get("/api/posts?parent_id=root").json["posts"] as? [[String: Any]]
        #expect(roots?.map { $0["title"] as? String } == ["another root", "root"])
        let underRoot = try ash.get("/api/posts?parent_id=\(root.id)").json["posts"] as? [[String: Any]]
        #expect(underRoot?.count == 2)
        let blair = try APIClient.user("blair@example.com", on: app)
        let blairs = try blair.createPost("by blair")
        let byBlair = try ash.get("/api/posts?user_id=\(blairs["user_id"] as! Int)").json["posts"] as? [[String: Any]]
        #expect(byBlair?.map { $0["title"] as? String } == ["by blair"])
        #expect((try ash.get("/api/posts/recent?limit=2")).json["posts"].map { ($0 as? [Any])?.count } == 2)
    }

    /// Every page of 120 posts, walked with each limit, yields each post once, newest first;
    /// a full last page still says `next_cursor: null`.
    @Test func walkingAllPages_yieldsEachPostOnceNewestFirst() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let root = try ash.createPost("root")
        var ids: [Int] = []
        for index in 0..<120 { ids.append(try ash.createPost("post \(index)", parent: root.id).id) }
        for (limit, path) in [(7, "/api/posts?parent_id=\(root.id)"), (40, "/api/posts/\(root.id)/children"),
                              (100, "/api/posts?parent_id=\(root.id)")] {
            var seen: [Int] = []
            var cursor: String?
            var pages = 0
            repeat {
                let suffix = cursor.map { "&cursor=\($0)" } ?? ""
                let page = try ash.get("\(path)\(path.contains("?") ? "&" : "?")limit=\(limit)\(suffix)")
                #expect(page.status == 200)
                let posts = (page.json["posts"] ?? page.json["children"]) as? [[String: Any]] ?? []
                seen += posts.map(\.id)
                cursor = page.json["next_cursor"] as? String
                pages += 1
            } while cursor != nil && pages < 100
            #expect(seen == ids.reversed(), "limit \(limit) on \(path)")
            #expect(pages == (120 + limit - 1) / limit)
        }
    }

    @Test func badPageParameters_are400() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        for query in ["limit=0", "limit=101", "limit=abc", "limit=-1", "cursor=%%%", "cursor=abc", "parent_id=x",
                      "user_id=1.5"] {
            #expect(try client.get("/api/posts?\(query)").status == 400, "\(query)")
        }
        #expect(try client.get("/api/posts/recent?limit=100").status == 200)
    }

    /// A cursor of the right shape whose time PostgreSQL cannot hold (before 4713 BC, after
    /// 294276 AD, ±infinity) is as malformed as any other: it was a 500 (SQLSTATE 22008,
    /// "timestamp out of range"), found by scripts/api-conformance.
    @Test func cursorWithATimeOutOfRange_is400() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        let post = try APIClient.user("ash@example.com", on: app).createPost("Cursors").id
        func bigEndian(_ value: Int64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        func cursor(_ bytes: [UInt8]) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        for microseconds in [Int64.max, Int64.max - 1, 9_223_371_331_200_000_000, Int64.min, -211_813_488_000_000_001] {
            let keyset = cursor(bigEndian(microseconds) + bigEndian(1))
            for path in ["/api/posts", "/api/posts/recent", "/api/posts/\(post)/children", "/api/posts/\(post)/likes"] {
                let page = try client.get("\(path)?cursor=\(keyset)")
                #expect(page.status == 400 && page.json["error"] as? String == "bad_request", "\(path) \(microseconds)")
            }
            let commentCursor = cursor(bigEndian(microseconds) + [UInt8](repeating: 7, count: 16))
            let comments = try client.get("/api/posts/\(post)/comments?cursor=\(commentCursor)")
            #expect(comments.status == 400, "comments \(microseconds)")
        }
        // The last instant PostgreSQL holds still pages (to nothing older than it, here).
        let latest = cursor(bigEndian(9_223_371_331_199_999_999) + bigEndian(1))
        #expect(try client.get("/api/posts?cursor=\(latest)").status == 200)
    }
}
