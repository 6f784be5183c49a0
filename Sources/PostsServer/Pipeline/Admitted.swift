import HTTP
import Postgres

/// What the admission stages learnt from a request's head, carried by the server to the
/// route's handler (`RequestContext.admitted`), so nothing is resolved twice.
struct Admitted: Sendable {
    /// The caller the head named (a bearer token, or `X-User-Email` in trust mode).
    var caller: Caller?
    /// When the caller was remembered rather than read: what proves it is still current
    /// (`CallerProofStage` sends it ahead of the request's first statement).
    var callerProof: Precondition.Statement?
}

/// A stage that decides from the head alone, before the body is read: it throws to
/// refuse (the error is the answer), or notes what it learnt in `admitted`. It runs on a
/// worker and may block.
protocol AdmissionStage: Sendable {
    func admit(_ head: RequestHead, remoteAddress: String, access: Access, _ admitted: inout Admitted) throws
}

/// Resolves the caller the head names, for routes that use one: a dead token is 401 before
/// the body is read, and so is a route that requires a caller when nothing but a head
/// could name one (token mode).
struct HeadIdentityStage: AdmissionStage {
    let identity: Identity

    func admit(_ head: RequestHead, remoteAddress: String, access: Access, _ admitted: inout Admitted) throws {
        guard access != .open else { return }
        let resolved = try identity.resolve(namedBy: head.headers)
        admitted.caller = resolved?.caller
        admitted.callerProof = resolved?.proof
        // In trust mode the body's `email` field may still name the caller.
        if access == .required && admitted.caller == nil && !identity.trustsEmails { throw APIError.unauthenticated() }
    }
}

/// Trust mode only: a caller the head did not name may be named by the body's `email`
/// field; then a route that requires a caller and still has none is 401.
struct BodyIdentityStage: RequestStage {
    let identity: Identity

    func handle(_ request: Request, _ context: inout AppContext, next: AppHandler) throws -> Response {
        if context.access != .open && context.caller == nil {
            context.caller = try identity.caller(namedInBodyOf: request)
            context.callerNamedInBody = context.caller != nil
            if context.access == .required && context.caller == nil { throw APIError.unauthenticated() }
        }
        return try next(request, &context)
    }
}
