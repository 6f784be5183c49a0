import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// `GET /api/search` end to end: words in many scripts and with accents, web-search syntax,
/// ranking and paging, what is hidden, edits and deletes, people, bad input.
// One test at a time: each starts a server (see MentionTests).
@Suite(.serialized) struct SearchTests {
    static func search(_ client: APIClient, _ query: String, _ extra: String = "") throws -> (status: Int, json: [String: Any]) {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&+=#")
        let encoded = try #require(query.addingPercentEncoding(withAllowedCharacters: allowed))
        let response = try client.get("/api/search?q=\(encoded)\(extra)")
        return (response.status, response.json)
    }

    static func found(_ client: APIClient, _ query: String, _ extra: String = "") throws -> [Int] {
        let (status, json) = try search(client, query, extra)
        #expect(status == 200, "\(query): \(json)")
        return (json["posts"] as? [[String: Any]] ?? []).map(\.id)
    }

    /// The user ids a people search finds, in order.
    static func people(_ client: APIClient, _ query: String) throws -> [Int] {
        let (status, json) = try search(client, query, "&type=people")
        #expect(status == 200, "\(query): \(json)")
        return (json["profiles"] as? [[String: Any]] ?? []).compactMap { $0["user_id"] as? Int }
    }

    /// A new user named `username` (full name `fullName`): its id.
    @discardableResult
    static func person(_ username: String, fullName: String = "Someone", on app: Application) throws -> Int {
        let client = try APIClient.user("\(username.filter(\.isLetter))@example.com", on: app)
        let response = try client.send("PATCH", "/api/profiles/me", json: ["username": username, "full_name": fullName])
        #expect(response.status == 200, "\(response.text)")
        return try client.userID()
    }

    @Test func wordsInManyScripts_areFound_whateverTheirAccentsWidthOrCase() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let french = try ash.createPost("Le café de la gare", extra: ["body": "Une crème brûlée, s'il vous plaît"]).id
        let german = try ash.createPost("Straßenbahn in Köln", extra: ["body": "Größere Brötchen"]).id
        let vietnamese = try ash.createPost("Phở ở Hà Nội", extra: ["body": "Tiếng Việt có dấu"]).id
        let japanese = try ash.createPost("東京都庁の夜景", extra: ["body": "とても綺麗でした"]).id
        let chinese = try ash.createPost("我的猫很可爱", extra: ["body": "北京欢迎你"]).id
        let korean = try ash.createPost("서울의 봄", extra: ["body": "한국어를 배우고 있습니다"]).id
        let emoji = try ash.createPost("Party 🎉 time", extra: ["body": "🎉🎉 with ＦＵＬＬＷＩＤＴＨ letters"]).id
        #expect(try Self.found(ash, "cafe") == [french])
        #expect(try Self.found(ash, "CAFÉ brulee") == [french])
        #expect(try Self.found(ash, "strassenbahn") == [german])
        #expect(try Self.found(ash, "KOLN") == [german])
        #expect(try Self.found(ash, "pho ha noi") == [vietnamese])
        #expect(try Self.found(ash, "tiếng việt") == [vietnamese])
        // No spaces in Chinese and Japanese: a word inside a run is found, a lone character too.
        #expect(try Self.found(ash, "都庁") == [japanese])
        #expect(try Self.found(ash, "夜景") == [japanese])
        #expect(try Self.found(ash, "綺麗") == [japanese])
        #expect(try Self.found(ash, "猫") == [chinese])
        #expect(try Self.found(ash, "欢迎") == [chinese])
        #expect(try Self.found(ash, "北京欢迎") == [chinese])
        #expect(try Self.found(ash, "京欢北").isEmpty)
        #expect(try Self.found(ash, "배우고") == [korean])
        #expect(try Self.found(ash, "서울") == [korean])
        #expect(try Self.found(ash, "fullwidth") == [emoji])
        #expect(try Self.found(ash, "ｐａｒｔｙ") == [emoji])
        // Emoji, right-to-left text and lone combining marks are safe, if found by nothing.
        for odd in ["🎉", "שלום עולם", "\u{301}\u{301}", "مرحبا", "\u{202E}abc", "\u{FEFF}", "\u{10FFFF}"] {
            let (status, _) = try Self.search(ash, odd)
            #expect(status == 200, "\(odd)")
        }
        // A NUL cannot be text in PostgreSQL: refused as bad input, not failed on.
        let (status, json) = try Self.search(ash, "a\u{0}b")
        #expect(status == 400, "\(json)")
    }

    @Test func webSearchSyntax_phraseExcludeAndOr() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let quick = try ash.createPost("The quick brown fox").id
        let brown = try ash.createPost("A brown quick dog").id
        let cat = try ash.createPost("A lazy cat").id
        #expect(Set(try Self.found(ash, "quick brown")) == [quick, brown])
        #expect(try Self.found(ash, "\"quick brown\"") == [quick])
        #expect(try Self.found(ash, "brown -fox") == [brown])
        #expect(Set(try Self.found(ash, "fox or cat")) == [quick, cat])
        #expect(try Self.found(ash, "\"quick brown fox\"") == [quick])
        // Operators alone are an empty search, never an error.
        for operators in ["-", "\"", "or", "-\"\"", "- or -", "\"\" or \"\"", "!", "&|()", ":*", "'"] {
            let (status, json) = try Self.search(ash, operators)
            #expect(status == 200, "\(operators): \(json)")
        }
    }

    /// A phrase is found within a field, never across two: the title's last word and the
    /// summary's first (or the summary's last and the body's first) are not neighbours.
    @Test func aPhrase_neverSpansTwoFields() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let across = try ash.createPost("The quick", extra: ["summary": "brown fox", "body": "jumps over"]).id
        let within = try ash.createPost("A quick brown dog", extra: ["summary": "a fox", "body": "b"]).id
        #expect(try Self.found(ash, "\"quick brown\"") == [within])
        #expect(try Self.found(ash, "\"fox jumps\"").isEmpty)
        #expect(try Self.found(ash, "\"quick brown fox\"").isEmpty)
        // Phrases inside the summary and the body, past the gaps, are found as before.
        #expect(try Self.found(ash, "\"brown fox\"") == [across])
        #expect(try Self.found(ash, "\"jumps over\"") == [across])
        // Words, not phrases, still match in any field.
        #expect(Set(try Self.found(ash, "quick fox")) == [across, within])
        #expect(try Self.found(ash, "quick jumps") == [across])
    }

    @Test func relevance_weighsTitleOverSummaryOverBody_thenRecency() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let inBody = try ash.createPost("One", extra: ["summary": "x", "body": "marathon"]).id
        let inTitle = try ash.createPost("marathon", extra: ["summary": "x", "body": "y"]).id
        let inSummary = try ash.createPost("Two", extra: ["summary": "marathon", "body": "y"]).id
        let newerInBody = try ash.createPost("Three", extra: ["summary": "x", "body": "marathon"]).id
        #expect(try Self.found(ash, "marathon") == [inTitle, inSummary, newerInBody, inBody])
        #expect(try Self.found(ash, "marathon", "&sort=recent") == [newerInBody, inSummary, inTitle, inBody])
    }

    /// 1,000 matching posts (made by SQL), paged 37 at a time by relevance and by recency:
    /// each exactly once, in order.
    @Test func paging_aThousandMatches_hasNoDuplicateOrGap() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let ashID = try ash.userID()
        try app.pool.withConnection { connection in
            // Ranks of a few kinds, so ties are many and pages cut through them.
            try connection.query("""
                INSERT INTO posts (user_id, title, summary, body)
                SELECT \(Int64(ashID)), CASE WHEN g % 3 = 0 THEN 'needle' ELSE 'hay' END,
                       CASE WHEN g % 5 = 0 THEN 'needle needle' ELSE 's' END, 'needle in ' || g
                FROM generate_series(1, 1000) g
                """)
        }
        for sort in ["relevance", "recent"] {
            var seen: [Int] = []
            var cursor: String?
            repeat {
                let extra = "&limit=37&sort=\(sort)" + (cursor.map { "&cursor=\($0)" } ?? "")
                let (status, json) = try Self.search(ash, "needle", extra)
                #expect(status == 200)
                seen += (json["posts"] as? [[String: Any]] ?? []).map(\.id)
                cursor = json["next_cursor"] as? String
            } while cursor != nil && seen.count <= 1000
            #expect(seen.count == 1000 && Set(seen).count == 1000, "\(sort)")
        }
    }

    /// Past the newest `SearchService.window` posts: a search looks there only when the
    /// window does not fill a page; newest first it pages through both without a gap.
    @Test func matchesOlderThanTheWindow_areFound_andPagedWithoutAGap() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let ashID = Int64(try ash.userID())
        let span = Int(SearchService.window) + 5_000
        try app.pool.withConnection { connection in
            // The oldest 20 and the newest 10 say "rare"; "common" is in every one.
            try connection.query("""
                INSERT INTO posts (user_id, title, summary, body, created_at)
                SELECT \(ashID), CASE WHEN g <= 20 OR g > \(span - 10) THEN 'rare common' ELSE 'common' END, 's', 'b',
                       now() - make_interval(secs => \(span) - g)
                FROM generate_series(1, \(span)) g
                """)
        }
        let rare = try Self.found(ash, "rare", "&limit=50")
        #expect(rare.count == 30)
        var seen: [Int] = []
        var cursor: String?
        repeat {
            let (status, json) = try Self.search(ash, "rare", "&sort=recent&limit=7" + (cursor.map { "&cursor=\($0)" } ?? ""))
            #expect(status == 200)
            seen += (json["posts"] as? [[String: Any]] ?? []).map(\.id)
            cursor = json["next_cursor"] as? String
        } while cursor != nil && seen.count <= 30
        #expect(seen == seen.sorted(by: >) && Set(seen) == Set(rare) && seen.count == 30)
        // A page of "common" among the newest posts: the best of the window (all alike:
        // the newest first).
        let common = try Self.found(ash, "common", "&limit=5")
        #expect(common == Array(seen.prefix(5)))
    }

    @Test func anEdit_orADelete_showsInTheNextSearch() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost("Original words").id
        #expect(try Self.found(ash, "original") == [post])
        #expect(try ash.send("PATCH", "/api/posts/\(post)", json: ["title": "Edited wording"]).status == 200)
        #expect(try Self.found(ash, "original").isEmpty)
        #expect(try Self.found(ash, "edited") == [post])
        #expect(try ash.send("DELETE", "/api/posts/\(post)").status == 200)
        #expect(try Self.found(ash, "edited").isEmpty)
    }

    /// What the walk of `VisibilityWalkTests` does not: tombstones and anonymous readers.
    @Test func tombstones_neverAppear_andAnonymousSearchSeesWhatAnonymousReadsSee() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let blair = try APIClient.user("blair@example.com", on: app)
        let root = try ash.createPost("Kept as a tombstone").id
        try blair.createPost("A reply keeps it", parent: root)
        let anonymous = try APIClient(port: app.server.port)
        #expect(try Self.found(anonymous, "tombstone") == [root])
        #expect(try ash.send("DELETE", "/api/me").status == 200)
        #expect(try Self.found(anonymous, "tombstone").isEmpty)
        #expect(try Self.found(anonymous, "deleted").isEmpty)
        #expect(try Self.found(anonymous, "reply").count == 1)
    }

    @Test func people_byPrefixAndTypo_exactFirst_thenFollowed_thenFollowers() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let viewer = try APIClient.user("viewer@example.com", on: app)
        var ids: [String: Int] = [:]
        for name in ["ash_n", "ash", "ashley", "asher", "bob"] {
            ids[name] = try Self.person(name, fullName: name == "bob" ? "Robert Paulson" : "Person \(name)", on: app)
        }
        let fans = try (1...3).map { try APIClient.user("fan\($0)@example.com", on: app) }
        for fan in fans { #expect(try fan.follow(try #require(ids["ashley"])).status == 200) }
        #expect(try viewer.follow(try #require(ids["asher"])).status == 200)
        let people = { (query: String) throws -> [Int] in try Self.people(viewer, query) }
        let ash = try people("ash")
        #expect(ash.first == ids["ash"])
        #expect(Array(ash.prefix(3)) == [ids["ash"], ids["asher"], ids["ashley"]].compactMap { $0 })
        #expect(Set(ash) == Set(["ash", "ash_n", "ashley", "asher"].compactMap { ids[$0] }))
        #expect(try people("ashh").contains(try #require(ids["ash_n"])))
        #expect(try people("ASH_N").first == ids["ash_n"])
        // A word of the full name, with a typo.
        #expect(try people("paulsen") == [ids["bob"]].compactMap { $0 })
    }

    /// One edit of a username's prefix still finds it (API.md: typo-tolerant): a letter
    /// substituted, two swapped, one too many or one missing, wherever it falls; two do not.
    @Test func people_oneTypoInAUsernamesPrefix_findsIt() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let viewer = try APIClient.user("viewer@example.com", on: app)
        let target = try Self.person("nwiowflkhh_n", on: app)
        try Self.person("qzrvtmbxpd", on: app)
        for typo in ["nwiowulkhh", "xwiowflkhh", "nwiowflkhx", "nwiowflkhh_x", "nwiowfklhh", "wniowflkhh",
                     "nwiowfflkhh", "nwiowlkhh", "wiowflkhh", "nwiow_lkhh", "NWIÓWULKHH", "nwixw"] {
            #expect(try Self.people(viewer, typo) == [target], "\(typo)")
        }
        for twoEdits in ["nwxowulkhh", "nwiowulkxh", "wnoiwflkhh", "xwiowflkhx"] {
            #expect(try Self.people(viewer, twoEdits).isEmpty, "\(twoEdits)")
        }
    }

    /// Typo matches keep the order: the exact username, then the people the caller
    /// follows, then by followers.
    @Test func people_typoMatches_exactFirst_thenFollowed_thenFollowers() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let viewer = try APIClient.user("viewer@example.com", on: app)
        let exact = try Self.person("pemberton", on: app)
        let unknown = try Self.person("pembrrtonx", on: app)
        let followed = try Self.person("pemebrton_f", on: app)
        let popular = try Self.person("pembertn_p", on: app)
        for fan in 1...2 {
            #expect(try APIClient.user("fan\(fan)@example.com", on: app).follow(popular).status == 200)
        }
        #expect(try viewer.follow(followed).status == 200)
        #expect(try Self.people(viewer, "pemberton") == [exact, followed, popular, unknown])
    }

    @Test func badInput_isA400() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        for path in ["/api/search", "/api/search?q=", "/api/search?q=%20%20%09",
                     "/api/search?q=\(String(repeating: "a", count: 257))", "/api/search?q=x&type=users",
                     "/api/search?q=x&sort=best", "/api/search?q=x&type=people&sort=sideways",
                     "/api/search?q=x&type=tags&sort=best", "/api/search?q=x&limit=0", "/api/search?q=x&limit=101",
                     "/api/search?q=x&cursor=nope", "/api/search?q=x&type=people&cursor=AAAA"] {
            #expect(try ash.get(path).status == 400, "\(path)")
        }
        // A sort outside relevance|recent is refused whatever the type, in the error envelope;
        // people and tags take either (they have one order of their own).
        for type in ["posts", "people", "tags"] {
            let refused = try ash.get("/api/search?q=x&type=\(type)&sort=sideways")
            #expect(refused.json["status"] as? String == "error" && refused.json["error"] as? String == "bad_request", "\(type)")
            #expect(try ash.get("/api/search?q=x&type=\(type)&sort=recent").status == 200, "\(type)")
        }
        #expect(try Self.search(ash, String(repeating: "é", count: 256)).status == 200)
        #expect(try Self.search(ash, String(repeating: "é", count: 257)).status == 400)
    }
}
