import HTTP

/// One step every request takes on its way to its route, and back: it may answer by itself
/// (401, 429), change the context, or look at the answer (metrics).
protocol RequestStage: Sendable {
    func handle(_ request: Request, _ context: inout AppContext, next: AppHandler) throws -> Response
}

typealias AppHandler = @Sendable (Request, inout AppContext) throws -> Response

/// The stages every request passes before its route, in order, in one place. Around them
/// the server itself gives each request its id (first, also to requests it refuses before
/// routing) and writes its access-log line naming the route pattern (last). A new concern
/// (rate limits, metrics) is a new stage here; routes never change for it.
struct Pipeline: Sendable {
    private let stages: [any RequestStage]

    /// `limiter`: nil when `RATE_LIMIT_IP` is 0. `localOriginsOnly`: trust mode on loopback.
    init(identity: Identity, changes: ChangeNudge, limiter: RateLimiter?, localOriginsOnly: Bool) {
        var stages: [any RequestStage] = []
        if localOriginsOnly { stages.append(LocalOriginStage()) }
        if let limiter { stages.append(RateLimitStage(limiter: limiter)) }
        stages += [
            ChangeNudgeStage(nudge: changes),
            IdentityStage(identity: identity),
        ]
        self.stages = stages
    }

    /// The route's handler behind every stage, folded once at start-up.
    func wrap(access: Access, _ handler: @escaping @Sendable (Request, AppContext) throws -> Response) -> Router.Handler {
        let route: AppHandler = { request, context in try handler(request, context) }
        let chain = stages.reversed().reduce(route) { next, stage in
            { request, context in try stage.handle(request, &context, next: next) }
        }
        return { request, http in
            var context = AppContext(http: http, access: access, caller: nil)
            return try chain(request, &context)
        }
    }
}

/// Resolves the caller for routes that use one; the only stage that knows about identity.
struct IdentityStage: RequestStage {
    let identity: Identity

    func handle(_ request: Request, _ context: inout AppContext, next: AppHandler) throws -> Response {
        if context.access != .open {
            context.caller = try identity.caller(of: request)
            if context.access == .required && context.caller == nil { throw HTTPError.unauthorized() }
        }
        return try next(request, &context)
    }
}

/// After a write that succeeded, a nudge to this instance's change feed: its subscribers
/// see the change without waiting for the next poll. A write that recorded nothing (a
/// sign-in code, a no-op like) only makes the feed look once more.
struct ChangeNudgeStage: RequestStage {
    let nudge: ChangeNudge

    func handle(_ request: Request, _ context: inout AppContext, next: AppHandler) throws -> Response {
        let response = try next(request, &context)
        if request.method != .GET && request.method != .HEAD && (200..<300).contains(response.status.code) {
            nudge.changed()
        }
        return response
    }
}
