/// One page of `/api/changes`: the changes after a cursor, oldest first.
public struct ChangesPage: Sendable, Equatable {
    public let changes: [Change]
    /// The cursor to persist: the next page (or the next catch-up) starts after it.
    public let nextSince: String
    /// True when another page is ready now.
    public let hasMore: Bool

    public init(changes: [Change], nextSince: String, hasMore: Bool) {
        self.changes = changes
        self.nextSince = nextSince
        self.hasMore = hasMore
    }
}

/// `/api/changes` after a cursor as an `AsyncSequence` of pages, oldest first: each page
/// follows the previous one's `nextSince`, and the sequence ends with the first page that
/// says nothing more is ready (`hasMore == false`). Persist the last page's `nextSince`
/// and start the next catch-up (or `events(filter:since:)`) from it.
public struct ChangesSequence: AsyncSequence, Sendable {
    public typealias Element = ChangesPage
    typealias Fetch = @Sendable (_ since: String) async throws -> ChangesPage

    private let since: String
    private let fetch: Fetch

    init(since: String, fetch: @escaping Fetch) {
        self.since = since
        self.fetch = fetch
    }

    public func makeAsyncIterator() -> Iterator { Iterator(since: since, fetch: fetch) }

    public struct Iterator: AsyncIteratorProtocol {
        var since: String
        let fetch: Fetch
        var finished = false

        public mutating func next() async throws -> ChangesPage? {
            guard !finished else { return nil }
            let page = try await fetch(since)
            since = page.nextSince
            finished = !page.hasMore
            return page
        }
    }
}

extension PostsClient {
    /// The current position of the change log, with no changes: take it *before* a full
    /// fetch of what the app shows, then catch up from it with `changes(since:)`.
    public func changesPosition() async throws -> String {
        try await send(APIRequest("GET", "/api/changes"), as: ChangesEnvelope.self).nextSince
    }

    /// Every change after `since` that `filter` selects, exactly once and in commit order,
    /// a page of up to `pageSize` (1…1000) at a time. A `since` older than the server
    /// keeps is `gone` (410): resynchronise from scratch.
    public func changes(since: String, filter: ChangeFilter = .all, pageSize: Int = 100) -> ChangesSequence {
        ChangesSequence(since: since) { [self] since in
            let query = filter.queryItems + [("since", since), ("limit", String(pageSize))]
            let answer = try await send(APIRequest("GET", "/api/changes", query: query), as: ChangesEnvelope.self)
            return ChangesPage(changes: answer.changes, nextSince: answer.nextSince, hasMore: answer.hasMore)
        }
    }
}
