import Foundation
@testable import PostsServer
import Testing
import TestSupport

/// API.md "The clock": `/api/dev/clock` sets, freezes, advances and resets the time of every
/// instance on the database (two instances here: what one sets, the other follows), and
/// everything the contract times follows it. Trust mode only.
@Suite struct DevClockTests {
    /// A read of the shared state that began before the one in force never replaces it: an
    /// announcement's read landing after this instance's own next change cannot undo it.
    @Test func aStaleReadOfTheSharedState_neverUndoesANewerOne() {
        let clock = ServerClock()
        let older = DevState.ticket(), newer = DevState.ticket()
        clock.apply(ServerClock.Setting(offsetMilliseconds: 60_000), read: newer)
        clock.apply(.real, read: older)
        #expect(clock.setting == ServerClock.Setting(offsetMilliseconds: 60_000))
        clock.apply(.real, read: DevState.ticket())
        #expect(clock.setting == .real)
    }

    /// Two instances of one database.
    static func pair(token: Bool = false) throws -> (Application, Application) {
        let database = try TestDatabase.makeDatabase()
        let first = try TestApplication.start(conninfo: database) { if token { $0.authMode = .token } }
        do {
            return (first, try TestApplication.start(conninfo: database) { if token { $0.authMode = .token } })
        } catch {
            first.stop()
            throw error
        }
    }

    private static func clock(_ client: APIClient) throws -> [String: Any] {
        let answer = try client.get("/api/dev/clock")
        #expect(answer.status == 200, "\(answer.text)")
        return answer.json["clock"] as? [String: Any] ?? [:]
    }

    @Test func aClockSetOnOneInstance_isEveryInstancesTime_andStampsWhatTheyWrite() throws {
        let (here, there) = try Self.pair()
        defer { here.stop(); there.stop() }
        let onHere = try APIClient(port: here.server.port)
        let onThere = try APIClient(port: there.server.port)

        let set = try onHere.send("PUT", "/api/dev/clock", json: ["now": "2030-01-01T00:00:00Z", "frozen": true])
        #expect(set.status == 200, "\(set.text)")
        #expect((set.json["clock"] as? [String: Any])?["now"] as? String == "2030-01-01T00:00:00.000Z")
        #expect(try eventually { try Self.clock(onThere)["now"] as? String == "2030-01-01T00:00:00.000Z" })
        #expect(try Self.clock(onThere)["frozen"] as? Bool == true)
        // What the other instance writes carries the shared time.
        let author = try APIClient.user("ash@example.com", on: there)
        #expect(try author.createPost("In 2030")["created_at"] as? String == "2030-01-01T00:00:00.000Z")

        #expect(try onThere.send("POST", "/api/dev/clock/advance", json: ["seconds": 3600.5]).status == 200)
        #expect(try eventually { try Self.clock(onHere)["now"] as? String == "2030-01-01T01:00:00.500Z" })
        // Back while frozen is allowed; the time stands there.
        #expect(try onHere.send("POST", "/api/dev/clock/advance", json: ["seconds": -0.5]).status == 200)
        #expect(try eventually { try Self.clock(onThere)["now"] as? String == "2030-01-01T01:00:00.000Z" })
        #expect(try author.createPost("An hour on")["created_at"] as? String == "2030-01-01T01:00:00.000Z")

        // Running from a set time: it moves on from there.
        #expect(try onHere.send("PUT", "/api/dev/clock", json: ["frozen": false]).status == 200)
        let running = try Self.clock(onHere)
        #expect(running["frozen"] as? Bool == false)
        #expect(((running["offset_seconds"] as? Double) ?? 0) > 90_000_000)

        #expect(try onThere.send("DELETE", "/api/dev/clock").status == 200)
        #expect(try eventually { abs(try Self.clock(onHere)["offset_seconds"] as? Double ?? 1e9) < 60 })
        #expect(try Self.clock(onHere)["frozen"] as? Bool == false)
    }

    @Test func whatTheContractTimes_followsTheClock_codesExpireAndTokensDie() throws {
        let (here, there) = try Self.pair()
        defer { here.stop(); there.stop() }
        let client = try APIClient(port: here.server.port)
        // A sign-in code lives ten minutes.
        #expect(try client.send("POST", "/api/auth/send-code", json: ["email": "ash@example.com"]).status == 200)
        let code = try AuthTests.latestCode(for: "ash@example.com", in: here)
        #expect(try client.send("POST", "/api/dev/clock/advance", json: ["seconds": 601]).status == 200)
        let late = try APIClient(port: there.server.port)
        // The other instance follows within a second (API.md), by its announcement.
        #expect(try eventually { (try Self.clock(late)["offset_seconds"] as? Double ?? 0) >= 600 })
        #expect(try late.send("POST", "/api/auth/verify-code", json: ["email": "ash@example.com", "code": code]).status == 401)

        // A token unused for its lifetime (90 days by default) is dead, on every instance.
        let token = try AuthTests.signIn("blair@example.com", in: here, client: client)
        let holder = try APIClient(port: there.server.port)
        holder.headers["Authorization"] = "Bearer \(token)"
        #expect(try holder.get("/api/me").status == 200)
        #expect(try client.send("POST", "/api/dev/clock/advance", json: ["seconds": 91 * 86400]).status == 200)
        #expect(try eventually { try holder.get("/api/me").status == 401 })
    }

    /// Every time the server writes is the clock's: with the clock frozen years from now, a
    /// tour of the writes (sign-in, posts, replies, comments, likes, follows, blocks, mutes,
    /// reports, push tokens, an idempotent create, the jobs they queue) leaves no time in any
    /// table far from it (one taken from the database's own clock would be years away).
    @Test func everyTimeTheServerWrites_isTheClocks() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let dev = try APIClient(port: app.server.port)
        #expect(try dev.send("PUT", "/api/dev/clock", json: ["now": "2031-03-03T03:03:03Z", "frozen": true]).status == 200)
        let token = try AuthTests.signIn("ash@example.com", in: app, client: dev)
        let ash = try APIClient(port: app.server.port)
        ash.headers["Authorization"] = "Bearer \(token)"
        let blair = try APIClient.user("blair@example.com", on: app)
        let cy = try APIClient.user("cy@example.com", on: app)
        let ashID = try ash.userID(), cyID = try cy.userID()
        #expect(try blair.send("PUT", "/api/users/\(ashID)/follow").status == 200)
        let post = try ash.createPost("Hello @blair #spring").id
        _ = try blair.createPost("A reply", parent: post)
        #expect(try blair.send("POST", "/api/posts/\(post)/comments", json: ["body": "Nice @ash"]).status == 201)
        let comments = try ash.get("/api/posts/\(post)/comments").json["comments"] as? [[String: Any]] ?? []
        let comment = try #require(comments.first?["id"] as? String)
        #expect(try ash.send("PUT", "/api/comments/\(comment)/like").status == 200)
        #expect(try blair.send("PUT", "/api/posts/\(post)/like").status == 200)
        #expect(try ash.send("PUT", "/api/users/\(cyID)/block").status == 200)
        #expect(try blair.send("PUT", "/api/users/\(cyID)/mute").status == 200)
        #expect(try blair.send("POST", "/api/reports", json: ["post_id": post, "reason": "spam"]).status == 201)
        #expect(try ash.send("PUT", "/api/me/push-tokens", json: ["platform": "apns", "token": "abc123"]).status == 200)
        #expect(try cy.send("POST", "/api/posts", json: ["title": "t", "summary": "s", "body": "b"],
                            headers: ["Idempotency-Key": "k1"]).status == 201)
        #expect(try app.jobs.drain())

        let far: [String] = try app.pool.withConnection { connection in
            let columns = try connection.query("""
                SELECT quote_ident(table_name) AS t, quote_ident(column_name) AS c FROM information_schema.columns
                WHERE table_schema = current_schema() AND data_type = 'timestamp with time zone'
                  AND table_name NOT IN ('schema_migrations', 'dev_clock')
                """).rows.map { (try $0.decode("t", as: String.self), try $0.decode("c", as: String.self)) }
            #expect(columns.count > 20)
            var far: [String] = []
            // Names from the catalog, quoted by quote_ident; nothing from a request.
            for (table, column) in columns {
                let n: Int64 = try connection.query("""
                    SELECT count(*) AS n FROM \(unsafeSQL: table)
                    WHERE \(unsafeSQL: column) NOT BETWEEN '2031-03-01T00:00:00Z'::timestamptz AND '2031-03-06T00:00:00Z'::timestamptz
                    """).firstRow().decode("n")
                if n > 0 { far.append("\(table).\(column): \(n)") }
            }
            return far
        }
        #expect(far.isEmpty, "times not from the clock: \(far)")
    }

    @Test func badInput_isAClear4xx_andChangesNothing() throws {
        let (here, there) = try Self.pair()
        defer { here.stop(); there.stop() }
        let client = try APIClient(port: here.server.port)
        for body: [String: Any?] in [["now": "yesterday"], ["now": "2030-13-01T00:00:00Z"], [:], ["frozen": "yes"]] {
            let answer = try client.send("PUT", "/api/dev/clock", json: body)
            #expect((400..<500).contains(answer.status), "\(body): \(answer.status) \(answer.text)")
        }
        for body: [String: Any?] in [[:], ["seconds": "ten"], ["seconds": 1e300]] {
            #expect((400..<500).contains(try client.send("POST", "/api/dev/clock/advance", json: body).status), "\(body)")
        }
        // Back on a running clock: refused, the clock unmoved.
        let back = try client.send("POST", "/api/dev/clock/advance", json: ["seconds": -60])
        #expect(back.status == 422, "\(back.text)")
        #expect(back.json["error"] as? String == "validation_failed")
        #expect(abs(try Self.clock(client)["offset_seconds"] as? Double ?? 1e9) < 60)
    }

    @Test func aReset_putsTheClockBackToRealTime() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        #expect(try client.send("PUT", "/api/dev/clock", json: ["now": "2040-06-01T12:00:00Z", "frozen": true]).status == 200)
        #expect(try client.send("POST", "/api/dev/reset").status == 200)
        let clock = try Self.clock(client)
        #expect(clock["frozen"] as? Bool == false && abs(clock["offset_seconds"] as? Double ?? 1e9) < 60)
    }

    @Test func tokenMode_hasNoClockNorFaults() throws {
        let app = try TestApplication.start { $0.authMode = .token }
        defer { app.stop() }
        let client = try APIClient(port: app.server.port)
        #expect(try client.get("/api/dev/clock").status == 404)
        #expect(try client.send("PUT", "/api/dev/clock", json: ["frozen": true]).status == 404)
        #expect(try client.get("/api/dev/faults").status == 404)
        #expect(try client.send("POST", "/api/dev/faults", json: ["match": ["path": "/**"], "status": 503]).status == 404)
    }
}
