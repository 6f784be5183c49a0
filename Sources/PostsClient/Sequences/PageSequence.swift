/// One page of a listing: its items, and the cursor of the next page (nil exactly when
/// nothing follows).
public struct Page<Item: Sendable>: Sendable {
    public let items: [Item]
    public let nextCursor: String?

    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

extension Page: Equatable where Item: Equatable {}

/// A listing as an `AsyncSequence` of its items: iterating fetches the first page, then
/// each next one by its `next_cursor` as the loop gets there, and ends after the page
/// whose cursor is nil. Breaking out of the loop fetches nothing more. Each iteration
/// starts again from the first page.
///
///     for try await child in client.children(of: post.id) { … }
///     let firstTen = try await client.children(of: post.id, pageSize: 10).pages.first { _ in true }
public struct PageSequence<Item: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Item
    typealias Fetch = @Sendable (_ cursor: String?) async throws -> Page<Item>

    private let fetch: Fetch

    init(fetch: @escaping Fetch) {
        self.fetch = fetch
    }

    /// The same listing a page at a time, for a UI that shows pages as they come.
    public var pages: Pages { Pages(fetch: fetch) }

    /// Every item, all pages fetched.
    public func collect() async throws -> [Item] {
        var items: [Item] = []
        for try await page in pages { items += page.items }
        return items
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(pages: pages.makeAsyncIterator())
    }

    public struct Iterator: AsyncIteratorProtocol {
        var pages: Pages.Iterator
        var buffered: [Item] = []
        var index = 0

        public mutating func next() async throws -> Item? {
            while index == buffered.count {
                guard let page = try await pages.next() else { return nil }
                buffered = page.items
                index = 0
            }
            defer { index += 1 }
            return buffered[index]
        }
    }

    /// The pages of a listing, each fetched when asked for.
    public struct Pages: AsyncSequence, Sendable {
        public typealias Element = Page<Item>
        let fetch: Fetch

        public func makeAsyncIterator() -> Iterator { Iterator(fetch: fetch) }

        public struct Iterator: AsyncIteratorProtocol {
            let fetch: Fetch
            var cursor: String?
            var finished = false

            init(fetch: @escaping Fetch) { self.fetch = fetch }

            public mutating func next() async throws -> Page<Item>? {
                guard !finished else { return nil }
                let page = try await fetch(cursor)
                cursor = page.nextCursor
                finished = page.nextCursor == nil
                return page
            }
        }
    }
}

extension PostsClient {
    /// A listing route as a `PageSequence`: `limit` and `cursor` in the query, each answer
    /// made into a page by `page`. A nil `pageSize` sends no `limit`: the server's default.
    func pages<Envelope: Decodable & Sendable, Item: Sendable>(
        of envelope: Envelope.Type, _ path: String, query: [(String, String)] = [], pageSize: Int?,
        page: @escaping @Sendable (Envelope) -> Page<Item>
    ) -> PageSequence<Item> {
        PageSequence { [self] cursor in
            var items = query
            if let pageSize { items.append(("limit", String(pageSize))) }
            if let cursor { items.append(("cursor", cursor)) }
            return page(try await send(APIRequest("GET", path, query: items), as: Envelope.self))
        }
    }
}
