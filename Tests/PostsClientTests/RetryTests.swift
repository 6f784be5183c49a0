import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import PostsClient
import Testing

/// Automatic retries: only where repeating cannot do a thing twice, bounded, and with one
/// `Idempotency-Key` per call that every attempt carries.
@Suite struct RetryTests {
    private static let fast = RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(5))
    private static let unavailable = RecordingTransport.Step.answer(
        status: 503, headers: ["Retry-After": "0"], body: #"{"status":"error","error":"unavailable","message":"db"}"#)

    private static func client(_ transport: RecordingTransport, policy: RetryPolicy = fast) -> PostsClient {
        PostsClient(baseURL: URL(string: "http://127.0.0.1:9")!, token: "t", transport: transport, retryPolicy: policy)
    }

    /// The end-to-end proof: the server creates the post, the answer is lost, the retry
    /// with the same key gets the first answer again, and there is one post.
    @Test func aCreateWhoseAnswerIsLost_isRetriedWithItsKey_andMakesOnePost() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let signedIn = try await server.signedIn("ash@example.com")
        let transport = RecordingTransport(script: [.forwardThenLose])
        let ash = server.client(token: signedIn.token, transport: transport)

        let post = try await ash.createPost(draft("once"))
        let comment = try await ash.addComment("only once", to: post.id)

        let keys = transport.requests.map { $0.value(forHTTPHeaderField: "Idempotency-Key") }
        #expect(keys.count == 3)
        #expect(keys[0] != nil && keys[0] == keys[1])
        #expect(keys[2] != nil && keys[2] != keys[0])
        #expect(try await ash.posts().collect().map(\.id) == [post.id])
        #expect(try await ash.comments(on: post.id).collect().map(\.id) == [comment.id])
    }

    @Test func eachCall_getsAKeyOfItsOwn() async throws {
        let transport = RecordingTransport(script: Array(repeating: Self.unavailable, count: 6))
        let client = Self.client(transport, policy: .never)
        for _ in 0..<2 { _ = try? await client.createPost(draft("x")) }
        let keys = transport.requests.compactMap { $0.value(forHTTPHeaderField: "Idempotency-Key") }
        #expect(keys.count == 2 && Set(keys).count == 2)
    }

    @Test func unavailableWithRetryAfter_isRetried_untilTheAttemptsAreSpent() async throws {
        let transport = RecordingTransport(script: Array(repeating: Self.unavailable, count: 5))
        let error = await #expect(throws: PostsAPIError.self) { try await Self.client(transport).post(id: 1) }
        #expect(error?.code == .unavailable && error?.retryAfter == .zero)
        #expect(transport.requests.count == 3)
    }

    @Test func aTransportFailure_isRetriedForGets_butNotForAToggle() async throws {
        let gets = RecordingTransport(script: [.fail(.networkConnectionLost), .fail(.timedOut), .fail(.cannotConnectToHost)])
        await #expect(throws: URLError.self) { try await Self.client(gets).post(id: 1) }
        #expect(gets.requests.count == 3)

        let toggles = RecordingTransport(script: [.fail(.networkConnectionLost)])
        await #expect(throws: URLError.self) { try await Self.client(toggles).toggleLike(postID: 1) }
        #expect(toggles.requests.count == 1)
    }

    /// A report needs no key: the server answers the reporter's open report on the same
    /// target again, so the retry after a lost answer makes no second report.
    @Test func aReportWhoseAnswerIsLost_isSentAgain_andStaysOneReport() async throws {
        let server = try ClientTestServer.start()
        defer { server.stop() }
        let ash = try await server.signedIn("ash@example.com")
        let post = try await ash.createPost(draft("reported"))
        let transport = RecordingTransport(script: [.forwardThenLose])
        let blair = server.client(token: try await server.signedIn("blair@example.com").token, transport: transport)
        let report = try await blair.report(.post(post.id), reason: .spam)
        #expect(transport.requests.count == 2)
        #expect(try await blair.report(.post(post.id), reason: .spam).id == report.id)

        // Resolving twice is a conflict and suspending twice logs twice: never retried.
        let resolves = RecordingTransport(script: [.fail(.networkConnectionLost)])
        await #expect(throws: URLError.self) { try await Self.client(resolves).resolveReport(id: 1, action: .dismiss) }
        #expect(resolves.requests.count == 1)
    }

    @Test func clientErrors_andLongWaits_areThrownAtOnce() async throws {
        let notFound = RecordingTransport(script: [.answer(status: 404, headers: [:], body: #"{"status":"error","error":"not_found","message":"no such post"}"#)])
        await #expect(throws: PostsAPIError(status: 404, code: .notFound, message: "no such post")) {
            try await Self.client(notFound).post(id: 1)
        }
        #expect(notFound.requests.count == 1)
        let limited = RecordingTransport(script: [.answer(status: 429, headers: ["Retry-After": "3600"], body: #"{"status":"error","error":"rate_limited","message":"slow down"}"#)])
        await #expect(throws: PostsAPIError.self) { try await Self.client(limited).sendCode(to: "a@example.com") }
        #expect(limited.requests.count == 1)
        let later = RecordingTransport(script: [.answer(status: 503, headers: ["Retry-After": "60"], body: "")])
        await #expect(throws: PostsAPIError.self) { try await Self.client(later).post(id: 1) }
        #expect(later.requests.count == 1)
    }

    /// A 408: the server stopped waiting before it had the whole request, and did nothing;
    /// even a toggle is sent again.
    @Test func aRequestTimeout_408_isSentAgain_evenForAToggle() async throws {
        let timedOut = RecordingTransport.Step.answer(status: 408, headers: ["Connection": "close"],
                                                      body: #"{"status":"error","error":"request_timeout","message":"the request took too long"}"#)
        let liked = RecordingTransport.Step.answer(status: 200, headers: [:], body: #"{"status":"success","post_id":1,"liked":true,"like_count":1}"#)
        let transport = RecordingTransport(script: [timedOut, liked])
        let state = try await Self.client(transport).toggleLike(postID: 1)
        #expect(state.liked && transport.requests.count == 2)
    }

    @Test func aKeyStillRunning_409WithRetryAfter_isRetried() async throws {
        let running = RecordingTransport.Step.answer(status: 409, headers: ["Retry-After": "0"], body: #"{"status":"error","error":"conflict","message":"running"}"#)
        let created = RecordingTransport.Step.answer(status: 201, headers: [:], body: #"{"status":"success","comment":{"id":"7d0b2c9e-4f7c-4bd4-9a57-0d8b4c1e2f3a","post_id":1,"user_id":1,"body":"b","created_at":"2026-11-20T14:05:00.000Z","profile":{"user_id":1,"username":"ash","full_name":"","bio":"","avatar_url":null,"created_at":"2026-11-20T14:05:00.000Z"}}}"#)
        let transport = RecordingTransport(script: [running, created])
        let comment = try await Self.client(transport).addComment("b", to: 1)
        #expect(comment.body == "b" && transport.requests.count == 2)
    }

    @Test func backoff_doublesUpToTheMaximum() {
        let policy = RetryPolicy(maxAttempts: 10, initialDelay: .milliseconds(100), maximumDelay: .milliseconds(350))
        #expect((1...4).map { policy.backoff(afterAttempt: $0) } == [.milliseconds(100), .milliseconds(200), .milliseconds(350), .milliseconds(350)])
    }
}
