import HTTP

/// `PUT`/`DELETE /api/posts/<id>/like`, `POST …/like/toggle` and `GET …/likes`.
enum LikeRoutes {
    static func register(on routes: inout RouteTable, likes: LikeService) {
        let likes = PerRequest(likes)
        for (method, path, action) in [("PUT", "/api/posts/:id/like", LikeService.Action.like),
                                       ("DELETE", "/api/posts/:id/like", .unlike),
                                       ("POST", "/api/posts/:id/like/toggle", .toggle)] {
            let handler: RouteTable.Handler = { _, context in
                let id = try context.parameters.require("id", as: Int64.self)
                let state = try likes(context).apply(action, post: id, by: context.requireCaller())
                var answer = JSONObject.success()
                answer.add("post_id", id)
                answer.add("liked", state.liked)
                answer.add("like_count", state.likeCount)
                return answer.response()
            }
            switch method {
            case "PUT": routes.put(path, access: .required, coalesces: true, handler)
            case "DELETE": routes.delete(path, access: .required, coalesces: true, handler)
            default: routes.post(path, access: .required, body: .none, coalesces: true, handler)
            }
        }

        routes.get("/api/posts/:id/likes", etag: true) { request, context in
            let id = try context.parameters.require("id", as: Int64.self)
            return try PostPageAnswer.make(id, likes(context).likers(of: id, PageRequest<KeysetCursor>(request.query), caller: context.caller),
                                           nextCursor: { $0.nextCursor?.text }) { likers, answer in
                answer.add("like_count", likers.likeCount)
                answer.addRaw("profiles", likers.profilesJSON)
            }
        }
    }
}
