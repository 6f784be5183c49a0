import HTTP

/// `GET /api/changes` (catch-up after being offline) and `GET /api/events` (the same
/// changes live, as Server-Sent Events).
enum ChangeRoutes {
    static let maxLimit = 1000
    /// API.md: a subscriber with 1 MiB waiting for it in the server is cut off.
    static let subscriberQueueLimit = 1 << 20
    /// Seconds a client past its event streams is asked to wait: about the reconnect
    /// delay the stream itself advises (`retry: 2000`).
    static let retryAfterStreamLimit = 2

    private enum EventStart {
        case after(ChangeKey)
        case now(ChangeSnapshot)
    }

    /// `streams`: nil when `MAX_STREAMS_PER_IP` is 0.
    /// `reads`: a page's answer carries `Read-After` (with replicas), so a client that reads
    /// what a change names next is served by a database that has it.
    static func register(on routes: inout RouteTable, reader: ChangeReader, feed: ChangeFeed, streams: StreamQuota?,
                         reads: ReadYourWrites) {
        let reader = PerRequest(reader)
        routes.get("/api/changes", etag: true) { request, context in
            let filter = try ChangeFilter(request.query).hiding(for: context.caller, on: .changes)
            let limit = try PageRequest<KeysetCursor>(request.query, maxLimit: maxLimit, defaultLimit: 100).limit
            var answer = JSONObject.success()
            guard let text = request.query["since"] else {
                // No cursor: no changes, and the position to follow from after a full fetch.
                answer.addRaw("changes", Array("[]".utf8))
                answer.add("next_since", try reader(context).currentPosition().text)
                answer.add("has_more", false)
                var response = answer.response()
                // (Read after the position: the fetch that follows has everything before it.)
                if let token = reads.currentToken(rememberingFor: context.caller, address: context.http.remoteAddress) {
                    response.headers.add(ReadYourWrites.header, token)
                }
                return response
            }
            let since = try ChangeKey(text)
            let page = try reader(context).page(after: since, filter: filter, limit: limit)
            var changes: [UInt8] = [UInt8(ascii: "[")]
            for (index, change) in page.changes.enumerated() {
                if index > 0 { changes.append(UInt8(ascii: ",")) }
                changes += change.json
            }
            changes.append(UInt8(ascii: "]"))
            answer.addRaw("changes", changes)
            answer.add("next_since", page.next.text)
            answer.add("has_more", page.hasMore)
            var response = answer.response()
            if let token = reads.currentToken() { response.headers.add(ReadYourWrites.header, token) }
            return response
        }

        routes.get("/api/events") { request, context in
            try stream(request, context, filter: try ChangeFilter(request.query).hiding(for: context.caller, on: .eventStream),
                       reader: reader(context), feed: feed, streams: streams)
        }
    }

    /// A Server-Sent Events answer of the changes `filter` lets through: resumed after
    /// `Last-Event-ID` (or `?since`; 410 now, before the stream, if that is gone), else
    /// from the position as this answer starts; one of the address's `streams`.
    static func stream(_ request: Request, _ context: AppContext, filter: ChangeFilter, reader: ChangeReader,
                       feed: ChangeFeed, streams: StreamQuota?) throws -> Response {
        let start: EventStart
        if let text = request.headers["Last-Event-ID"] ?? request.query["since"] {
            let since = try ChangeKey(text)
            try reader.checkRetained(since)
            start = .after(since)
        } else {
            start = .now(try reader.snapshot())
        }
        var lease: StreamQuota.Lease?
        if let streams {
            guard let claimed = streams.claim(for: context.http.remoteAddress) else {
                throw APIError(.tooManyRequests, "this address has \(streams.perClient) event streams open already",
                               retryAfter: retryAfterStreamLimit)
            }
            lease = claimed
        }
        let stream = ResponseStream(queueLimit: subscriberQueueLimit) { [lease] writer in
            if let lease { writer.onClose { lease.release() } }
            writer.write(Array("retry: 2000\n\n".utf8))
            switch start {
            case .after(let since): feed.subscribe(writer, filter: filter, since: since)
            case .now(let snapshot): feed.subscribe(writer, filter: filter, after: snapshot)
            }
        }
        return Response(headers: HTTPHeaders([("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
                                              ("X-Accel-Buffering", "no")]),
                        body: .stream(stream))
    }
}
