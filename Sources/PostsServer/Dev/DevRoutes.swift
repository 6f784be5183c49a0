import HTTP

/// API.md's development affordances, registered only in trust mode (404 otherwise):
/// `GET /api/dev/mailbox?email=` shows what the outbox holds for an address, so an app's
/// UI test can sign in without a mail server; `POST /api/dev/reset` empties everything (the
/// clock and the faults too); `POST /api/dev/seed` fills it with demo content. The clock and
/// the faults: `DevClockRoutes`.
enum DevRoutes {
    private static let done = Response.json(Array(#"{"status":"success"}"#.utf8))

    static func register(on routes: inout RouteTable, outbox: Outbox, reset: DevReset, seed: DemoSeed, clock: DevClock,
                         faults: DevFaults) {
        routes.post("/api/dev/reset", access: .open) { _, _ in
            try reset.run()
            // The tables are empty: real time, no fault, here at once and everywhere soon.
            try clock.reset()
            try faults.delete(nil)
            return done
        }
        DevClockRoutes.register(on: &routes, clock: clock, faults: faults)
        routes.post("/api/dev/seed", access: .open) { request, _ in
            let fields = try BodyFields(request)
            let counts = try seed.run(users: try count("users", in: fields, default: 10, limit: DemoSeed.maxUsers),
                                      posts: try count("posts", in: fields, default: 50, limit: DemoSeed.maxPosts))
            var answer = JSONObject.success()
            answer.add("users", counts.users)
            answer.add("posts", counts.posts)
            answer.add("likes", counts.likes)
            answer.add("comments", counts.comments)
            answer.add("comment_likes", counts.commentLikes)
            answer.add("follows", counts.follows)
            return answer.response(status: .created)
        }
        routes.get("/api/dev/mailbox", access: .open) { request, _ in
            let email = try EmailAddress(required(request.query["email"], "email"))
            let messages = try outbox.messages(for: email.value).map { message in
                var object = JSONObject()
                object.add("to", message.recipient)
                object.add("subject", message.subject)
                object.add("body", message.body)
                object.add("created_at", message.createdAt)
                return object
            }
            var answer = JSONObject.success()
            answer.add("messages", messages)
            return answer.response()
        }
    }

    private static func count(_ key: String, in fields: BodyFields, default value: Int, limit: Int) throws -> Int {
        guard let asked = try fields.integer(key) else { return value }
        guard (0...Int64(limit)).contains(asked) else {
            throw APIError.invalid("\(key) must be 0 to \(limit)")
        }
        return Int(asked)
    }
}
