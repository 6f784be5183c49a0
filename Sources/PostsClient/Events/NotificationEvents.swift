/// The caller's new notifications as they are written (`/api/notifications/events`), an
/// `AsyncSequence` that outlives its connections exactly as `ChangeEvents` does: after a
/// drop it reconnects with `Last-Event-ID` and the server replays what was missed, with no
/// gap and no duplicate; failed reconnects are bounded by the `RetryPolicy`; 410 `gone`,
/// 400 and 401 are thrown at once. Cancelling the iterating task ends it.
///
/// It says only that a notification was written: one undone (an unlike, an unfollow, a
/// deleted comment) or marked read on another device sends nothing. An app that shows a
/// badge counts what arrives and asks `unreadNotificationCount()` again when it comes back
/// to the foreground.
public struct NotificationEvents: AsyncSequence, Sendable {
    public typealias Element = PostsNotification

    let client: PostsClient
    let since: String?
    let policy: RetryPolicy

    public func makeAsyncIterator() -> Iterator {
        Iterator(ResumingEventStream(client: client, path: "/api/notifications/events", eventType: "notification",
                                     lastEventID: since, policy: policy))
    }

    public struct Iterator: AsyncIteratorProtocol {
        private var stream: ResumingEventStream<PostsNotification>

        init(_ stream: ResumingEventStream<PostsNotification>) { self.stream = stream }

        /// The event id of the last notification this iterator returned (or the `since`
        /// given): what an app stores to resume from after it quits. Opaque, and not the
        /// notification's `id`.
        public var lastEventID: String? { stream.lastEventID }

        public mutating func next() async throws -> PostsNotification? {
            try await stream.next()
        }
    }
}
