import Foundation
import PostsClient
import Testing
import TestSupport

/// Live changes over Server-Sent Events through the client: delivered as they commit,
/// resumed with `Last-Event-ID` across a server restart with nothing missed or repeated,
/// and errors that reconnecting cannot fix thrown rather than retried forever.
@Suite struct ClientEventsTests {
    @Test func liveChanges_resumeAcrossARestart_withoutGapOrDuplicate() async throws {
        try await withDeadline {
            var server = try ClientTestServer.start(cluster: .changes)
            defer { server.stop() }
            let ash = try await server.signedIn("ash@example.com")
            // Opening from a known position: nothing committed before the stream's head is lost.
            // Reconnects every 100 ms at most, for as long as a slow machine takes to restart.
            let patient = RetryPolicy(maxAttempts: 200, initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100))
            var events = ash.events(since: try await ash.changesPosition(), reconnect: patient).makeAsyncIterator()
            let root = try await ash.createPost(draft("A"))
            let first = try #require(try await events.next())
            #expect(first.type == .postCreated && first.post?.title == "A")

            // Another instance on the same database takes a write while this one is down:
            // only a resume with Last-Event-ID can deliver it.
            let other = try TestApplication.start(conninfo: server.app.configuration.databaseURL)
            defer { other.stop() }
            let viaOther = PostsClient(baseURL: URL(string: "http://127.0.0.1:\(other.server.port)")!, token: ash.token)
            try await server.restart {
                _ = try await viaOther.createPost(draft("B", parent: root.id))
            }
            try await ash.like(postID: root.id)

            let second = try #require(try await events.next())
            #expect(second.type == .postCreated && second.post?.title == "B" && second.parentChildCount == 1)
            let third = try #require(try await events.next())
            #expect(third.type == .likeChanged && third.likeCount == 1)
            #expect(events.lastEventID == third.seq)
        }
    }

    @Test func aFilter_selectsThePostsChanges() async throws {
        try await withDeadline {
            let server = try ClientTestServer.start(cluster: .changes)
            defer { server.stop() }
            let ash = try await server.signedIn("ash@example.com")
            // The position is conservative (it may precede writes not yet past the server's
            // horizon): take it before the writes, and expect exactly the filtered ones.
            let start = try await ash.changesPosition()
            let watched = try await ash.createPost(draft("watched"))
            let elsewhere = try await ash.createPost(draft("elsewhere"))
            var events = ash.events(filter: .post(watched.id), since: start).makeAsyncIterator()
            try await ash.like(postID: elsewhere.id)
            try await ash.addComment("elsewhere", to: elsewhere.id)
            let comment = try await ash.addComment("here", to: watched.id)
            let created = try #require(try await events.next())
            #expect(created.type == .postCreated && created.post?.id == watched.id)
            let change = try #require(try await events.next())
            #expect(change.type == .commentCreated && change.comment == comment && change.commentCount == 1)
        }
    }

    @Test func aCursorPastRetention_orMalformed_isThrown_notRetried() async throws {
        try await withDeadline {
            let server = try ClientTestServer.start(cluster: .changes)
            defer { server.stop() }
            let ash = try await server.signedIn("ash@example.com")
            let start = try await ash.changesPosition()
            _ = try await ash.createPost(draft("pruned"))
            try ChangeRetention.pruneEverything(in: server.app)
            var gone = ash.events(since: start).makeAsyncIterator()
            let error = await #expect(throws: PostsAPIError.self) { _ = try await gone.next() }
            #expect(error?.status == 410 && error?.code == .gone)
            var malformed = ash.events(since: "garbage").makeAsyncIterator()
            let bad = await #expect(throws: PostsAPIError.self) { _ = try await malformed.next() }
            #expect(bad?.status == 400)
        }
    }

    /// At the server's limit of streams per address the answer is 429 with `Retry-After`:
    /// a passing state, waited out and retried until a place is free.
    @Test func aStreamPastTheAddressLimit_isRetried_untilAPlaceIsFree() async throws {
        try await withDeadline(.seconds(120)) {
            let server = try ClientTestServer.start { $0.maxStreamsPerIP = 1 }
            defer { server.stop() }
            let ash = try await server.signedIn("ash@example.com")
            var holder: EventStreamClient? = try EventStreamClient(port: server.app.server.port)
            #expect(holder?.head.status == 200)
            let start = try await ash.changesPosition()
            _ = try await ash.createPost(draft("waited for"))
            // Patient enough to outlast the look below on a loaded machine (the whole suite
            // shares two cores and two threads of the cooperative pool): about 25 s of tries.
            let patient = RetryPolicy(maxAttempts: 100, initialDelay: .milliseconds(20), maximumDelay: .milliseconds(250))
            let first = Task {
                var events = ash.events(since: start, reconnect: patient).makeAsyncIterator()
                return try await events.next()
            }
            let refusals = #"http_requests_total{method="GET",route="/api/events",status="429"}"#
            // The async `eventually`, not MetricsProbe.wait: a test that blocks a thread of the
            // cooperative pool (two here) can starve the task it waits for.
            let refused = try await eventually(timeout: .seconds(100)) {
                try MetricsProbe(port: server.app.server.port).value(refusals) ?? 0 >= 1
            }
            #expect(refused)
            holder = nil
            let event = try #require(try await first.value)
            #expect(event.type == .postCreated && event.post?.title == "waited for")
            #expect(holder == nil)
        }
    }

    @Test func aServerThatStaysDown_endsTheSequence_afterTheAttemptsAreSpent() async throws {
        try await withDeadline {
            // A port nothing listens on, held: a stopped server's could be another test's by now.
            let down = try RefusedPort()
            defer { down.close() }
            let client = PostsClient(baseURL: try #require(URL(string: "http://127.0.0.1:\(down.port)")), token: nil)
            var events = client.events(reconnect: RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(5),
                                                              maximumDelay: .milliseconds(20))).makeAsyncIterator()
            await #expect(throws: URLError.self) { _ = try await events.next() }
        }
    }
}
