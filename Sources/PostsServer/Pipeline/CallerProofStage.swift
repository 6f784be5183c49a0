import HTTP
import Postgres

/// Checks a caller the identity stage remembered rather than read (`CallerCache`): its
/// proof travels with the request's first statement (`Precondition`: a read's one-time
/// filter, or a statement ahead of a write in the same pipeline), so a current caller
/// costs no round trip. When the proof fails, that statement did nothing: the caller is
/// read afresh (401 or 403 if it is no longer valid) and the request runs again, nothing of
/// its first run having been done.
///
/// On the heavy lane the proof is checked first, by itself: work there comes before the
/// first statement (an image resized, a file stored) and must not be done twice.
struct CallerProofStage: RequestStage {
    let identity: Identity

    func handle(_ request: Request, _ context: inout AppContext, next: AppHandler) throws -> Response {
        guard let proof = context.callerProof else { return try next(request, &context) }
        context.callerProof = nil
        if context.http.lane == .heavy {
            if try identity.holds(proof) { return try next(request, &context) }
            return try again(request, &context, next: next)
        }
        var attempt = context
        let (result, precondition) = Precondition.checking(proof, refutation: CallerCache.refuted) { try next(request, &attempt) }
        switch precondition.outcome {
        case .failed(let error) where error.sqlState == CallerCache.refuted:
            return try again(request, &context, next: next)
        case .pending:
            // It sent no statement: a route that reads nothing, or one moving to the heavy lane
            // (which runs this stage again there).
            if case .failure(let error) = result, error is MoveToHeavyLane { throw error }
            if try !identity.holds(proof) { return try again(request, &context, next: next) }
        case .held, .failed:
            // (Failed otherwise, a lost connection say: the request failed with that error.)
            break
        }
        context = attempt
        return try result.get()
    }

    private func again(_ request: Request, _ context: inout AppContext, next: AppHandler) throws -> Response {
        context.caller = try identity.caller(namedBy: request.head.headers)
        if context.access == .required && context.caller == nil { throw APIError.unauthenticated() }
        return try next(request, &context)
    }
}
