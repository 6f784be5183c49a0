import HTTP

/// `GET /api/profiles/<user_id>` and `PATCH /api/profiles/me`.
enum ProfileRoutes {
    static func register(on routes: inout RouteTable, profiles: ProfileService) {
        routes.get("/api/profiles/:user_id", etag: true) { _, context in
            let userID = try context.parameters.require("user_id", as: Int64.self)
            guard let profile = try profiles.profile(of: userID) else { throw APIError.notFound("no such profile") }
            return answer(profile)
        }

        routes.patch("/api/profiles/me", access: .required) { request, context in
            let caller = try context.requireCaller()
            let patch = try RequestFields.decode(ProfilePatch.self, from: request).validated()
            return answer(try profiles.update(caller.userID, with: patch))
        }
    }

    private static func answer(_ profile: [UInt8]) -> Response {
        var answer = JSONObject.success()
        answer.addRaw("profile", profile)
        return answer.response()
    }
}
