import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PostsClient
import Synchronization

/// A transport that records every attempt and answers from a script: each step either
/// forwards to a real transport, forwards and then loses the answer (the server did the
/// work, the app never hears of it), or answers by itself.
final class RecordingTransport: HTTPTransport {
    enum Step: Sendable {
        case forward
        case forwardThenLose
        case fail(URLError.Code)
        case answer(status: Int, headers: [String: String], body: String)
    }

    private let forwardTo: any HTTPTransport
    private let state: Mutex<(script: [Step], requests: [URLRequest])>

    /// After the script runs out, every request is forwarded.
    init(forwardingTo transport: any HTTPTransport = URLSessionTransport(), script: [Step]) {
        forwardTo = transport
        state = Mutex((script, []))
    }

    var requests: [URLRequest] { state.withLock { $0.requests } }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let step = state.withLock { state in
            state.requests.append(request)
            return state.script.isEmpty ? Step.forward : state.script.removeFirst()
        }
        switch step {
        case .forward:
            return try await forwardTo.send(request)
        case .forwardThenLose:
            _ = try await forwardTo.send(request)
            throw URLError(.networkConnectionLost)
        case .fail(let code):
            throw URLError(code)
        case .answer(let status, let headers, let body):
            let response = HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
            return (Data(body.utf8), response)
        }
    }
}
