import HTTP

/// `PUT` and `DELETE /api/me/push-tokens` (API.md "Push"), both with a JSON body naming
/// the token.
enum PushTokenRoutes {
    static func register(on routes: inout RouteTable, tokens: PushTokens) {
        let tokens = PerRequest(tokens)
        let body = BodyPolicy.collect(limit: Configuration.UploadLimits.api.maxJSONBytes)
        routes.put("/api/me/push-tokens", access: .required, body: body) { request, context in
            let input = try RequestFields.decode(PushTokenInput.self, from: request).validated()
            var answer = JSONObject.success()
            answer.add("push_token", try tokens(context).register(input, for: context.requireCaller()))
            return answer.response()
        }

        // Idempotent: removing a token that is gone (or never was the caller's) is 200 too.
        routes.delete("/api/me/push-tokens", access: .required, body: body) { request, context in
            let input = try RequestFields.decode(PushTokenInput.self, from: request).validated()
            var answer = JSONObject.success()
            answer.add("removed", try tokens(context).remove(input, for: context.requireCaller()))
            return answer.response()
        }
    }
}
