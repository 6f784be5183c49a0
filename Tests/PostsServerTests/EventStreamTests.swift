import Foundation
import Postgres
@testable import PostsServer
import Testing
import TestSupport

/// `/api/events`: Server-Sent Events framing, live delivery, resuming with Last-Event-ID,
/// filters, keep-alives, and a subscriber that stops reading.
@Suite struct EventStreamTests {
    @Test func stream_startsWithRetry_thenDeliversEachChangeLive() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let events = try EventStreamClient(port: app.server.port)
        #expect(events.head.status == 200)
        #expect(events.head.header("Content-Type") == "text/event-stream")
        #expect(events.head.header("Cache-Control") == "no-cache")
        #expect(try events.next().text == "retry: 2000\n\n")
        let ash = try APIClient.user("ash@example.com", on: app)
        let post = try ash.createPost("live")
        let event = try events.nextChange()
        #expect(event.type == "post.created")
        #expect(event.text.hasPrefix("id: \(event.id ?? "")\nevent: post.created\ndata: {"))
        #expect(event.text.hasSuffix("}\n\n") && event.text.components(separatedBy: "\n").count == 5)
        #expect(event.json["seq"] as? String == event.id)
        // As compact as the routes' answers, carried objects included.
        #expect(!event.text.contains("\" : ") && !event.text.contains(", \""))
        #expect((event.json["post"] as? [String: Any])?["id"] as? Int == post.id)
        // The same change, with the same seq, in /api/changes.
        let logged = try ChangeLogTests.changes(after: try #require(event.id), in: ash, count: 0)
        #expect(logged.isEmpty)
        // And /metrics counts it.
        let metrics = try APIClient(port: app.server.port).get("/metrics")
        #expect(metrics.header("Content-Type") == "text/plain; version=0.0.4")
        #expect(metrics.text.contains("# TYPE events_subscribers gauge\nevents_subscribers 1\n"))
        #expect(metrics.text.contains("# TYPE events_delivered_total counter\nevents_delivered_total 1\n"))
        #expect(metrics.text.contains("\nevents_lag_seconds "))
    }

    /// A reconnect with Last-Event-ID gets what it missed from the table, then goes on live:
    /// no gap, no duplicate.
    @Test func reconnectWithLastEventID_replaysWhatItMissed_thenGoesLive() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        var first: EventStreamClient? = try EventStreamClient(port: app.server.port)
        _ = try first?.next()
        _ = try ash.createPost("A")
        let seen = try #require(try first?.nextChange())
        first = nil
        _ = try ash.createPost("B")
        _ = try ash.createPost("C")
        let resumed = try EventStreamClient(port: app.server.port, headers: ["Last-Event-ID": try #require(seen.id)])
        _ = try resumed.next()
        let replayed = [try resumed.nextChange(), try resumed.nextChange()]
        #expect(replayed.map { ($0.json["post"] as? [String: Any])?["title"] as? String } == ["B", "C"])
        _ = try ash.createPost("D")
        let live = try resumed.nextChange()
        #expect((live.json["post"] as? [String: Any])?["title"] as? String == "D")
        // The same through ?since=.
        let viaQuery = try EventStreamClient(port: app.server.port, query: "since=\(try #require(replayed[0].id))")
        _ = try viaQuery.next()
        #expect((try viaQuery.nextChange().json["post"] as? [String: Any])?["title"] as? String == "C")
        #expect(try EventStreamClient(port: app.server.port, headers: ["Last-Event-ID": "garbage"]).head.status == 400)
    }

    @Test func filters_selectTheChangesOfAPost() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let watched = try ash.createPost("watched")
        let other = try ash.createPost("other")
        let events = try EventStreamClient(port: app.server.port, query: "post_id=\(watched.id)")
        _ = try events.next()
        _ = try ash.send("PUT", "/api/posts/\(other.id)/like")
        _ = try ash.send("POST", "/api/posts/\(other.id)/comments", json: ["body": "elsewhere"])
        _ = try ash.send("POST", "/api/posts/\(watched.id)/comments", json: ["body": "here"])
        let child = try ash.createPost("reply", parent: watched.id)
        let first = try events.nextChange()
        #expect(first.type == "comment.created" && first.json["post_id"] as? Int == watched.id)
        let second = try events.nextChange()
        #expect(second.type == "post.created" && second.json["post_id"] as? Int == child.id)
    }

    @Test func quietStream_getsKeepAliveComments() throws {
        let app = try TestApplication.start { $0.eventsKeepAlive = .milliseconds(300) }
        defer { app.stop() }
        let events = try EventStreamClient(port: app.server.port)
        _ = try events.next()
        #expect(try events.next().text == ": keep-alive\n\n")
    }

    /// A stream without a cursor starts below the horizon, which an open transaction holds
    /// back; what committed before it started is still passed over: it gets exactly the
    /// changes after its start.
    @Test func streamStartingNow_whileTheHorizonIsHeldBack_skipsWhatCommittedBefore() throws {
        let app = try TestApplication.start(cluster: .own)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let holder = try PostgresConnection(conninfo: app.configuration.directDatabaseURL!)
        defer { holder.close() }
        _ = try holder.query("BEGIN")
        _ = try holder.query("SELECT pg_current_xact_id()")
        _ = try ash.createPost("before")
        let events = try EventStreamClient(port: app.server.port)
        _ = try events.next()
        _ = try ash.createPost("after")
        _ = try holder.query("ROLLBACK")
        let first = try events.nextChange()
        #expect((first.json["post"] as? [String: Any])?["title"] as? String == "after")
    }

    /// The feed's LISTEN connection is killed: it reconnects, listens again and catches up
    /// from the table, so a subscriber misses nothing written meanwhile.
    @Test func feedConnectionLost_reconnectsAndMissesNothing() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let events = try EventStreamClient(port: app.server.port)
        _ = try events.next()
        let ash = try APIClient.user("ash@example.com", on: app)
        _ = try ash.createPost("before")
        #expect(try events.nextChange().type == "post.created")
        let killed: Int = try app.pool.withConnection { connection in
            try connection.query("""
                SELECT count(pg_terminate_backend(pid))::int AS killed FROM pg_stat_activity
                WHERE application_name = 'posts-server change feed' AND datname = current_database()
                """).first!.decode("killed")
        }
        #expect(killed == 1)
        let titles = (0..<5).map { "after \($0)" }
        for title in titles { _ = try ash.createPost(title) }
        for title in titles {
            let event = try events.nextChange()
            #expect((event.json["post"] as? [String: Any])?["title"] as? String == title)
        }
    }

    /// One subscriber stops reading: once 1 MiB waits for it beyond its socket (and does not
    /// drain), it is cut off, while another subscriber receives every change.
    @Test func stalledSubscriber_isCutOff_whileAnotherReceivesEverything() throws {
        let app = try TestApplication.start(cluster: .changes)
        defer { app.stop() }
        let ash = try APIClient.user("ash@example.com", on: app)
        let userID = try #require((try ash.get("/api/me").json["user"] as? [String: Any])?["id"] as? Int)
        let stalled = try EventStreamClient(port: app.server.port)
        let reader = try EventStreamClient(port: app.server.port)
        _ = try reader.next()
        // 400 changes of 64 KiB each: 25 MiB, far past the limit and what the kernel buffers.
        let filler = String(repeating: "x", count: 64 * 1024)
        for index in 0..<400 {
            try app.pool.withConnection { connection in
                _ = try connection.query("""
                    INSERT INTO changes (type, user_id, data) VALUES ('profile.updated', \(Int64(userID)),
                        json_build_object('n', \(Int64(index)), 'filler', \(filler)))
                    """)
            }
        }
        var received = 0
        while received < 400 {
            let event = try reader.nextChange()
            #expect(event.json["n"] as? Int == received)
            received += 1
        }
        // Cut, without reading a byte: what it had not taken by then is all it ever gets.
        #expect(try MetricsProbe(port: app.server.port).wait(for: "events_subscribers") { $0 == 1 })
        #expect(stalled.connection.waitForClose())
        #expect(stalled.connection.bufferedByteCount < 200 * filler.utf8.count)
    }
}
