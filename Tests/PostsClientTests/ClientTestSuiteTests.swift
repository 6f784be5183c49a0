import Foundation
import PostsClient
import Testing

/// `client.dev` as an app's XCTest suite uses it: a snapshot restored before each test, the
/// server's clock moved instead of a sleep, and a lost answer that the client's own
/// `Idempotency-Key` retry gets back.
@Suite struct ClientTestSuiteTests {
    @Test func aSnapshot_isSavedAndRestoredBeforeEachTest() async throws {
        try await withDeadline {
            let server = try ClientTestServer.start()
            defer { server.stop() }
            let ash = try await server.signedIn("ash@example.com")
            let kept = try await ash.createPost(draft("kept"))
            let saved = try await ash.dev.saveSnapshot("client.v1")
            #expect(saved.name == "client.v1" && saved.posts == 1 && saved.bytes > 0)
            _ = try await ash.createPost(draft("gone after the restore"))
            try await ash.dev.restoreSnapshot("client.v1")
            #expect(try await ash.recentPosts().collect().map(\.id) == [kept.id])
            #expect(try await ash.dev.snapshots().map(\.name) == ["client.v1"])
            try await ash.dev.deleteSnapshot("client.v1")
            #expect(try await ash.dev.snapshots().isEmpty)
        }
    }

    @Test func theClock_isSetFrozenAdvancedAndReal() async throws {
        try await withDeadline {
            let server = try ClientTestServer.start()
            defer { server.stop() }
            let client = server.client()
            let moment = Date(timeIntervalSince1970: 1_893_456_000)  // 2030-01-01T00:00:00Z
            let set = try await client.dev.setClock(to: moment, frozen: true)
            #expect(set.now == moment && set.frozen)
            #expect(try await client.dev.advanceClock(by: 90).now == moment.addingTimeInterval(90))
            let ash = try await server.signedIn("ash@example.com")
            #expect(try await ash.createPost(draft("dated")).createdAt == moment.addingTimeInterval(90))
            let real = try await client.dev.realClock()
            #expect(!real.frozen && abs(real.offsetSeconds) < 60)
        }
    }

    @Test func anAnswerLostAfterTheWrite_isRecoveredByTheClientsRetry_withoutASecondPost() async throws {
        try await withDeadline {
            let server = try ClientTestServer.start()
            defer { server.stop() }
            let ash = try await server.signedIn("ash@example.com")
            // (A 503 in place of the answer. With `drop`, the next try from Linux's URLSession
            // sent its head but never its body, and the server answered 408 ten seconds later,
            // which the client then sends again: right, but ten seconds. See the CHANGELOG.)
            let fault = try await ash.dev.addFault(FaultSpec("POST", "/api/posts", status: 503, afterCommit: true, times: 1))
            #expect(fault.match.path == "/api/posts" && fault.afterCommit && fault.hits == 0)
            let post = try await ash.createPost(draft("once"))
            #expect(post.title == "once")
            #expect(try await ash.recentPosts().collect().map(\.id) == [post.id])
            #expect(try await ash.dev.faults().first?.hits == 1)
            try await ash.dev.removeAllFaults()
            #expect(try await ash.dev.faults().isEmpty)
        }
    }
}
