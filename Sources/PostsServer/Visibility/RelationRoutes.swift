import HTTP

/// `PUT`/`DELETE /api/users/<id>/block` and `…/mute`, `GET /api/me/blocks` and
/// `GET /api/me/mutes` (API.md "Safety").
enum RelationRoutes {
    static func register(on routes: inout RouteTable, relations: RelationService) {
        let relations = PerRequest(relations)
        for kind in [RelationService.Kind.block, .mute] {
            let path = "/api/users/:id/\(kind == .block ? "block" : "mute")"
            for on in [true, false] {
                let handler: RouteTable.Handler = { _, context in
                    let user = try context.parameters.require("id", as: Int64.self)
                    try relations(context).set(kind, on: on, user: user, by: context.requireCaller())
                    var answer = JSONObject.success()
                    answer.add("user_id", user)
                    answer.add(kind.state, on)
                    return answer.response()
                }
                if on { routes.put(path, access: .required, handler) } else { routes.delete(path, access: .required, handler) }
            }
            routes.get("/api/me/\(kind.table)", access: .required, etag: true) { request, context in
                let listed = try relations(context).list(kind, of: context.requireCaller(), PageRequest<KeysetCursor>(request.query))
                var answer = JSONObject.success()
                answer.addRaw("profiles", listed.profilesJSON)
                answer.add("next_cursor", listed.nextCursor?.text)
                return answer.response()
            }
        }
    }
}
