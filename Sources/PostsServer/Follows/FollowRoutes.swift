import HTTP

/// `PUT`/`DELETE /api/users/<id>/follow`, `GET /api/users/<id>/followers` and
/// `…/following`, and the home feed `GET /api/feed` (API.md "Following").
enum FollowRoutes {
    static func register(on routes: inout RouteTable, follows: FollowService, feed: FeedService) {
        let follows = PerRequest(follows)
        let feed = PerRequest(feed)
        for on in [true, false] {
            let handler: RouteTable.Handler = { _, context in
                let user = try context.parameters.require("id", as: Int64.self)
                let state = try follows(context).set(following: on, user: user, by: context.requireCaller())
                var answer = JSONObject.success()
                answer.add("user_id", user)
                answer.add("following", state.following)
                if state.pending { answer.add("pending", true) }
                answer.add("followers_count", Int64(state.followersCount))
                return answer.response()
            }
            if on {
                routes.put("/api/users/:id/follow", access: .required, coalesces: true, handler)
            } else {
                routes.delete("/api/users/:id/follow", access: .required, coalesces: true, handler)
            }
        }

        for side in [FollowService.Side.followers, .following] {
            routes.get("/api/users/:id/\(side == .followers ? "followers" : "following")", etag: true) { request, context in
                let user = try context.parameters.require("id", as: Int64.self)
                guard let listed = try follows(context).list(side, of: user, caller: context.caller, PageRequest<KeysetCursor>(request.query)) else {
                    throw APIError.notFound("no such user")
                }
                var answer = JSONObject.success()
                answer.addRaw("profiles", listed.profilesJSON)
                answer.add("next_cursor", listed.nextCursor?.text)
                return answer.response()
            }
        }

        routes.get("/api/feed", access: .required, etag: true) { request, context in
            let page = try feed(context).page(for: context.requireCaller(), PageRequest<FeedCursor>(request.query))
            var answer = JSONObject.success()
            answer.addRaw("posts", page.json)
            answer.add("next_cursor", page.nextCursor?.text)
            return answer.response()
        }
    }
}
