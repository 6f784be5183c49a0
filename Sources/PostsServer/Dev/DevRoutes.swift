import HTTP

/// API.md's development affordances, registered only in trust mode (404 otherwise):
/// `GET /api/dev/mailbox?email=` shows what the outbox holds for an address, so an app's
/// UI test can sign in without a mail server; `POST /api/dev/reset` empties everything.
enum DevRoutes {
    private static let done = Response.json(Array(#"{"status":"success"}"#.utf8))

    static func register(on routes: inout RouteTable, outbox: Outbox, reset: DevReset) {
        routes.post("/api/dev/reset", access: .open) { _, _ in
            try reset.run()
            return done
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
}
