import HTTP

/// The read routes the console needs beyond the documented moderation API (API.md "The
/// console"): the overview's numbers, finding a user, and a user's sessions and the reports
/// against them. Moderators and admins only (403 for anyone else, 401 without a caller),
/// like every `/api/moderation` route.
enum ConsoleAPIRoutes {
    static func register(on routes: inout RouteTable, moderation: ModerationService, overview: ConsoleOverview,
                         lookup: UserLookup, record: UserRecord) {
        let moderation = PerRequest(moderation)
        let overview = PerRequest(overview)
        let lookup = PerRequest(lookup)
        let record = PerRequest(record)
        routes.get("/api/moderation/overview", access: .required) { _, context in
            try moderation(context).requireModerator(context.requireCaller())
            var answer = JSONObject.success()
            answer.addRaw("overview", try overview(context).render())
            return answer.response()
        }

        routes.get("/api/moderation/users", access: .required) { request, context in
            try moderation(context).requireModerator(context.requireCaller())
            guard let text = request.query["q"], !text.allSatisfy(\.isWhitespace) else {
                throw APIError.malformed("q is required: an id, an email address or a username")
            }
            guard text.count <= 256 else { throw APIError.malformed("q must be at most 256 characters") }
            return Response.json(try lookup(context).find(text))
        }

        routes.get("/api/moderation/users/:id/sessions", access: .required) { request, context in
            let caller = try context.requireCaller()
            try moderation(context).requireModerator(caller)
            let page = try record(context).sessions(of: try context.parameters.require("id", as: Int64.self),
                                                    PageRequest<KeysetCursor>(request.query), caller: caller)
            return pageAnswer("sessions", page)
        }

        routes.get("/api/moderation/users/:id/reports", access: .required) { request, context in
            try moderation(context).requireModerator(context.requireCaller())
            let page = try record(context).reports(against: try context.parameters.require("id", as: Int64.self),
                                                   PageRequest<KeysetCursor>(request.query))
            return pageAnswer("reports", page)
        }
    }

    private static func pageAnswer(_ key: String, _ page: (json: [UInt8], next: KeysetCursor?)) -> Response {
        var answer = JSONObject.success()
        answer.addRaw(key, page.json)
        answer.add("next_cursor", page.next?.text)
        return answer.response()
    }
}
