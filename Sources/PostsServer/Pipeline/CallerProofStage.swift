import HTTP
import Postgres

/// Checks a caller the identity stage remembered rather than read (`CallerCache`): its
/// proof becomes the precondition of the request's session (`AppContext.session`), so it
/// goes to the primary as a statement of its own in the same round trip as the request's
/// first statement there, ahead of it in one implicit transaction (`Precondition`); a read
/// served by a replica has it checked on the primary meanwhile and counts only once it
/// held. A current caller costs no round trip. A caller's requests share their checks: one
/// sent after this request arrived that held proves it too, and it sends none of its own
/// (`Precondition.Witness`; the precondition is made with the request's arrival time).
///
/// When the proof fails, nothing of the request was done: the statement it went ahead of
/// was skipped (or the replica's read dropped), it went with the first statement the
/// request sent to the primary, so nothing had been written before, and nothing was sent
/// after (every later statement of the session throws the refutation). Then the caller is
/// read afresh (401 or 403 if it is no longer valid) and the request runs again for it.
/// When the request sent nothing to the primary at all (a route that reads nothing), the
/// proof is checked by itself before the answer goes out.
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
        let precondition = Precondition(proof, refutation: CallerCache.refuted, arrivedAt: context.http.receivedAt)
        var attempt = context
        attempt.session.precondition = precondition
        let result = Result { try next(request, &attempt) }
        switch precondition.outcome {
        case .refuted:
            return try again(request, &context, next: next)
        case .pending:
            // It sent nothing to the primary (a route that reads nothing, or one moving to the
            // heavy lane, which runs this stage again there), or the check itself failed (a
            // lost connection: then so did the request, with that error).
            if case .failure(let error) = result, error is MoveToHeavyLane { throw error }
            if try !identity.holds(proof) { return try again(request, &context, next: next) }
        case .held:
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
