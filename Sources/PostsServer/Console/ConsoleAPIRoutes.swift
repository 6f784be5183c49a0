import HTTP

/// The read routes the console needs beyond the documented moderation API (API.md "The
/// console"): the overview's numbers and finding a user. Moderators and admins only (403
/// for anyone else, 401 without a caller), like every `/api/moderation` route.
enum ConsoleAPIRoutes {
    static func register(on routes: inout RouteTable, moderation: ModerationService, overview: ConsoleOverview,
                         lookup: UserLookup) {
        routes.get("/api/moderation/overview", access: .required) { _, context in
            try moderation.requireModerator(context.requireCaller())
            var answer = JSONObject.success()
            answer.addRaw("overview", try overview.render())
            return answer.response()
        }

        routes.get("/api/moderation/users", access: .required) { request, context in
            try moderation.requireModerator(context.requireCaller())
            guard let text = request.query["q"], !text.allSatisfy(\.isWhitespace) else {
                throw APIError.malformed("q is required: an id, an email address or a username")
            }
            guard text.count <= 256 else { throw APIError.malformed("q must be at most 256 characters") }
            return Response.json(try lookup.find(text))
        }
    }
}
