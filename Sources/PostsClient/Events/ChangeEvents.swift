/// The changes of `/api/events` as they commit, an `AsyncSequence` that outlives its
/// connections: when one drops (the network, a server restart, a stalled reader cut off),
/// it waits the stream's `retry:` time and reconnects with `Last-Event-ID` = the last
/// change it delivered, so the server replays what was missed, with no gap and no
/// duplicate. Failed reconnects back off and are bounded by the client's `RetryPolicy`;
/// an answer that retrying cannot fix (410 `gone`: the cursor is older than the server
/// keeps; 400; 401) is thrown at once. Cancelling the iterating task ends it.
public struct ChangeEvents: AsyncSequence, Sendable {
    public typealias Element = Change

    let client: PostsClient
    let filter: ChangeFilter
    let since: String?
    let policy: RetryPolicy

    public func makeAsyncIterator() -> Iterator {
        Iterator(ResumingEventStream(client: client, path: "/api/events", query: filter.queryItems,
                                     lastEventID: since, policy: policy))
    }

    public struct Iterator: AsyncIteratorProtocol {
        private var stream: ResumingEventStream<Change>

        init(_ stream: ResumingEventStream<Change>) { self.stream = stream }

        /// The `seq` of the last change this iterator returned (or the `since` given): what an
        /// app stores to resume from after it quits. (A reconnect resumes after the last
        /// change received, which may be ahead of it while received changes wait here.)
        public var lastEventID: String? { stream.lastEventID }

        public mutating func next() async throws -> Change? {
            try await stream.next()
        }
    }
}

extension PostsClient {
    /// The changes that `filter` selects, live, as they commit on any server instance.
    /// Without `since` it starts now (every change committed after the stream opens); with
    /// a `since` (a `Change.seq` or a `nextSince`) it first replays what came after it.
    /// - Parameter reconnect: bounds and paces reconnecting; the client's policy if nil.
    public func events(filter: ChangeFilter = .all, since: String? = nil, reconnect: RetryPolicy? = nil) -> ChangeEvents {
        ChangeEvents(client: self, filter: filter, since: since, policy: reconnect ?? retryPolicy)
    }
}
