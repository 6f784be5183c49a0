import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `ChangeEvents` and `NotificationEvents` iterate with: one route's Server-Sent
/// Events, each event's `data` decoded as `Element`, over as many connections as it takes.
/// When one drops (the network, a server restart, a stalled reader cut off), it waits the
/// stream's `retry:` time and reconnects with `Last-Event-ID` = the last event it
/// received, so the server replays what was missed, with no gap and no duplicate. Failed
/// reconnects back off and are bounded by the `RetryPolicy`; an answer that retrying
/// cannot fix (410 `gone`: the cursor is older than the server keeps; 400; 401) is thrown
/// at once. Cancelling the iterating task ends it.
struct ResumingEventStream<Element: Decodable> {
    let client: PostsClient
    let path: String
    let query: [(String, String)]
    /// The `event:` this stream delivers; others are passed over (nil: every event).
    let eventType: String?
    let policy: RetryPolicy
    private var connection: StreamingConnection?
    private var pieces: AsyncThrowingStream<StreamingConnection.Piece, any Error>.AsyncIterator?
    private var parser: ServerSentEventParser
    private var pending: [ServerSentEvent] = []
    /// Attempts in a row that did not get a stream; reset by one that does.
    private var failedAttempts = 0
    /// After a drop, the wait before reconnecting: `retry:`, or the policy's until then.
    private var dropped = false
    /// The current connection answered 200: its end is a drop, not a failed attempt.
    private var established = false
    /// The last refusal's `Retry-After`: the least wait before the next attempt.
    private var serverWait: Duration?

    init(client: PostsClient, path: String, query: [(String, String)] = [], eventType: String? = nil,
         lastEventID: String?, policy: RetryPolicy) {
        self.client = client
        self.path = path
        self.query = query
        self.eventType = eventType
        self.policy = policy
        parser = ServerSentEventParser(lastEventID: lastEventID ?? "")
        self.lastEventID = lastEventID
    }

    /// The id of the last event `next()` returned (or the one it started after): what an
    /// app stores to resume from after it quits. (A reconnect resumes after the last event
    /// received, which may be ahead of it while received events wait here.)
    private(set) var lastEventID: String?

    mutating func next() async throws -> Element? {
        while !Task.isCancelled {
            if !pending.isEmpty {
                let event = pending.removeFirst()
                if let eventType, event.type != eventType { continue }
                let element = try APIDateCoding.makeDecoder().decode(Element.self, from: Data(event.data.utf8))
                lastEventID = event.id
                return element
            }
            guard var stream = pieces else {
                try await connect()
                continue
            }
            do {
                let piece = try await stream.next()
                pieces = stream
                switch piece {
                case .head(let response)?:
                    try await accept(response)
                case .bytes(let data)?:
                    pending += parser.parse(data).filter { !$0.data.isEmpty }
                case nil:
                    try await lost(URLError(.networkConnectionLost))
                }
            } catch let error as PostsAPIError {
                throw error
            } catch {
                try await lost(error)
            }
        }
        disconnect(dropped: false)
        return nil
    }

    /// Opens a stream, after the wait a drop or a failure calls for.
    private mutating func connect() async throws {
        if failedAttempts > 0 || dropped {
            try await Task.sleep(for: delay())
        }
        dropped = false
        let request = APIRequest("GET", path, query: query)
        var urlRequest = try request.urlRequest(baseURL: client.baseURL, token: client.token, timeout: Self.idleTimeout)
        urlRequest.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        parser.startConnection()
        if !parser.lastEventID.isEmpty { urlRequest.setValue(parser.lastEventID, forHTTPHeaderField: "Last-Event-ID") }
        let opened = StreamingConnection(urlRequest, base: (client.transport as? URLSessionTransport)?.session.configuration)
        connection = opened
        pieces = opened.pieces.makeAsyncIterator()
    }

    /// 200 is a stream: the failures are over. Anything else is read whole and thrown,
    /// unless it is a passing state the policy retries: the database away (503), a proxy
    /// between (502, 504), or this address's streams at the server's limit (429), each
    /// after its `Retry-After` at least.
    private mutating func accept(_ response: HTTPURLResponse) async throws {
        if response.statusCode == 200 {
            failedAttempts = 0
            serverWait = nil
            established = true
            return
        }
        var body = Data()
        while case .bytes(let data)? = try await pieces?.next() { body += data }
        disconnect(dropped: false)
        let error = PostsAPIError(response: response, body: body)
        guard [429, 502, 503, 504].contains(error.status) else { throw error }
        serverWait = error.retryAfter
        try await failed(error)
    }

    /// The connection ended or failed: a drop of a stream that was up (reconnect after
    /// `retry:`), or one more failed attempt to open one.
    private mutating func lost(_ error: any Error) async throws {
        let wasUp = established
        disconnect(dropped: true)
        if !wasUp { try await failed(error) }
    }

    /// Counts a failed attempt; throws once the policy's attempts are spent.
    private mutating func failed(_ error: any Error) async throws {
        failedAttempts += 1
        guard failedAttempts < policy.maxAttempts else { throw error }
    }

    /// The server's `retry:` (else the policy's first delay), doubled for each failure
    /// in a row, never beyond the policy's maximum.
    private func delay() -> Duration {
        let base = parser.reconnectionTime ?? policy.initialDelay
        var wait = base
        for _ in 0..<Swift.max(failedAttempts - 1, 0) where wait < policy.maximumDelay { wait *= 2 }
        return Swift.max(Swift.min(wait, policy.maximumDelay), serverWait ?? .zero)
    }

    private mutating func disconnect(dropped: Bool) {
        connection?.close()
        connection = nil
        pieces = nil
        established = false
        self.dropped = dropped
    }

    /// Longer than the server's 15 s between keep-alive comments: a quiet stream is alive.
    static var idleTimeout: TimeInterval { 45 }
}
