import Foundation

/// The caller's notifications (API.md "Notifications"): what others did to its posts,
/// comments and name, listed, counted, marked read and delivered live. All need a
/// signed-in client (`unauthorized` otherwise). The server leaves out what comes from
/// users the caller blocked, was blocked by or muted, and from suspended users, in the
/// list, the count and the stream alike; undoing an act (an unlike, an unfollow, a
/// deleted comment) removes its notification.
extension PostsClient {
    /// The caller's notifications, newest first, read and unread.
    public func notifications(pageSize: Int = 50) -> PageSequence<PostsNotification> {
        pages(of: NotificationsPageEnvelope.self, "/api/notifications", pageSize: pageSize) {
            Page(items: $0.notifications, nextCursor: $0.nextCursor)
        }
    }

    /// How many of the caller's notifications are unread: the badge. One small request
    /// (the list's first page of one, which carries the count).
    public func unreadNotificationCount() async throws -> Int {
        try await send(APIRequest("GET", "/api/notifications", query: [("limit", "1")]),
                       as: NotificationsPageEnvelope.self).unreadCount
    }

    /// Marks the caller's notifications read: all of them, or with `upTo` those whose `id`
    /// is at most it (the newest one the app has shown, so that one written meanwhile stays
    /// unread). Marking again changes nothing, so a lost answer is retried.
    /// - Returns: the unread count after it.
    @discardableResult
    public func markNotificationsRead(upTo id: Int? = nil) async throws -> Int {
        let fields: [(String, JSONValue)] = id.map { [("up_to", .int($0))] } ?? []
        return try await send(APIRequest.json("POST", "/api/notifications/read", fields).repeatable(),
                              as: UnreadCountEnvelope.self).unreadCount
    }

    /// The caller's new notifications, live, as the acts that make them commit on any server
    /// instance. Without `since` it starts now; with a `since` it first replays what came
    /// after it: an iterator's `lastEventID` kept from before, or a `changesPosition()`
    /// taken before fetching `notifications()` (the stream counts in the change log's
    /// positions), in which case a notification may arrive that the list already showed:
    /// match them by `id`.
    /// - Parameter reconnect: bounds and paces reconnecting; the client's policy if nil.
    public func notificationEvents(since: String? = nil, reconnect: RetryPolicy? = nil) -> NotificationEvents {
        NotificationEvents(client: self, since: since, policy: reconnect ?? retryPolicy)
    }
}
