import HTTP

/// `GET /api/notifications`, `POST /api/notifications/read` and the caller's live stream
/// `GET /api/notifications/events` (API.md "Notifications"), all for the caller alone.
enum NotificationRoutes {
    static func register(on routes: inout RouteTable, notifications: NotificationService, reader: ChangeReader,
                         feed: ChangeFeed, streams: StreamQuota?) {
        let notifications = PerRequest(notifications)
        let reader = PerRequest(reader)
        routes.get("/api/notifications", access: .required, etag: true) { request, context in
            let page = try notifications(context).page(for: context.requireCaller(), PageRequest<KeysetCursor>(request.query))
            var answer = JSONObject.success()
            answer.addRaw("notifications", page.json)
            answer.add("unread_count", Int64(page.unreadCount))
            answer.add("next_cursor", page.nextCursor?.text)
            return answer.response()
        }

        routes.post("/api/notifications/read", access: .required) { request, context in
            let fields = request.body.isEmpty ? ReadFields() : try RequestFields.decode(ReadFields.self, from: request)
            if let upTo = fields.up_to, upTo < 1 { throw APIError.invalid("up_to must be a notification id") }
            let unread = try notifications(context).markRead(for: context.requireCaller(), upTo: fields.up_to)
            var answer = JSONObject.success()
            answer.add("unread_count", Int64(unread))
            return answer.response()
        }

        // The change feed's machinery (resume, keep-alive, stall cut-off, drain, the
        // address's quota of streams), over the caller's private changes only.
        routes.get("/api/notifications/events", access: .required) { request, context in
            try ChangeRoutes.stream(request, context, filter: .notifications(for: context.requireCaller()),
                                    reader: reader(context), feed: feed, streams: streams)
        }
    }

    /// `{"up_to": id}`, or `{}` (or no body) for all.
    private struct ReadFields: Decodable {
        var up_to: Int64?
    }
}
