import HTTP

/// One step every request takes on its way to its route, and back: it may answer by itself,
/// change the context, or look at the answer (metrics).
protocol RequestStage: Sendable {
    func handle(_ request: Request, _ context: inout AppContext, next: AppHandler) throws -> Response
}

typealias AppHandler = @Sendable (Request, inout AppContext) throws -> Response

/// The stages every request passes before its route, in order, in one place. Around them
/// the server itself gives each request its id (first, also to requests it refuses before
/// routing) and writes its access-log line naming the route pattern (last). A new concern
/// (rate limits, metrics) is a new stage here; routes never change for it.
///
/// The stages that need only the head (origin, rate limit, who the caller is) run as the
/// route's `Admission`: a request they refuse is answered before its body is read, so a
/// refused upload costs no disk. The rest run around the handler once the body is in.
struct Pipeline: Sendable {
    private let admissionStages: [any AdmissionStage]
    private let stages: [any RequestStage]

    /// `limiter`: nil when `RATE_LIMIT_IP` is 0. `localOriginsOnly`: trust mode on loopback.
    /// `faults`: trust mode's (`/api/dev/faults`), nil in token mode.
    init(identity: Identity, changes: ChangeNudge, reads: ReadYourWrites, limiter: RateLimiter?, localOriginsOnly: Bool,
         faults: DevFaults?) {
        var admissionStages: [any AdmissionStage] = []
        if localOriginsOnly { admissionStages.append(LocalOriginStage()) }
        if let limiter { admissionStages.append(RateLimitStage(limiter: limiter)) }
        admissionStages.append(HeadIdentityStage(identity: identity))
        self.admissionStages = admissionStages
        // Read-your-writes before the proof: it tells a caller read afresh by its missing proof.
        var stages: [any RequestStage] = []
        // Outermost: a fault's `after_commit` loses the answer of everything the request did.
        if let faults { stages.append(FaultStage(faults: faults)) }
        stages += [ChangeNudgeStage(nudge: changes), BodyIdentityStage(identity: identity), ReadYourWritesStage(reads: reads),
                   CallerProofStage(identity: identity)]
        self.stages = stages
    }

    /// The admission stages of a route, in order.
    func admission(access: Access) -> Admission {
        Admission { [admissionStages] head, remoteAddress in
            var admitted = Admitted()
            for stage in admissionStages {
                try stage.admit(head, remoteAddress: remoteAddress, access: access, &admitted)
            }
            return admitted
        }
    }

    /// The route's handler behind every stage, folded once at start-up.
    func wrap(access: Access, _ handler: @escaping @Sendable (Request, AppContext) throws -> Response) -> Router.Handler {
        let route: AppHandler = { request, context in try handler(request, context) }
        let chain = stages.reversed().reduce(route) { next, stage in
            { request, context in try stage.handle(request, &context, next: next) }
        }
        return { request, http in
            // The server ran the route's admission (registered beside this handler).
            let admitted = http.admitted as? Admitted ?? Admitted()
            var context = AppContext(http: http, access: access, caller: admitted.caller, callerProof: admitted.callerProof)
            return try chain(request, &context)
        }
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
