import HTTP

/// `PUT` and `DELETE /api/me/push-tokens` (API.md "Push"), both with a JSON body naming
/// the token.
enum PushTokenRoutes {
    /// `webPush`: with Web Push configured, a `webpush` token must be a subscription it
    /// can push to (422 otherwise); without it any token is kept, for the webhook.
    static func register(on routes: inout RouteTable, tokens: PushTokens, webPush: DirectPush?) {
        let checksSubscriptions = webPush?.validatesWebPush == true
        let tokens = PerRequest(tokens)
        let body = BodyPolicy.collect(limit: Configuration.UploadLimits.api.maxJSONBytes)
        routes.put("/api/me/push-tokens", access: .required, body: body) { request, context in
            let input = try RequestFields.decode(PushTokenInput.self, from: request).validated()
            if checksSubscriptions, input.platform == .webpush { try check(subscription: input.token, with: webPush) }
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

    private static func check(subscription text: String, with webPush: DirectPush?) throws(APIError) {
        let subscription: WebPushSubscription
        do {
            subscription = try WebPushSubscription(json: text)
        } catch {
            throw APIError.invalid(error.description)
        }
        guard webPush?.allowsEndpoint(subscription.endpoint) ?? true else {
            throw APIError.invalid("the subscription's endpoint is at a private address")
        }
    }
}
