import HTTP
import Logging
import Postgres

/// What a route handler receives beside the request: the server's context (request id,
/// parameters, logger) and the caller the pipeline resolved.
struct AppContext: Sendable {
    let http: RequestContext
    let access: Access
    var caller: Caller?
    /// Set when `caller` was remembered: its proof, still to be checked (`CallerProofStage`).
    var callerProof: SQLQuery?
    /// Set when the caller was named in the request's body (trust mode's `email` field, as
    /// the firefly app sends it with a write), not in a header its reads carry too.
    var callerNamedInBody = false

    var parameters: Parameters { http.parameters }
    var logger: Logger { http.logger }

    /// The caller of a route that requires one: the identity stage has answered 401 already
    /// when there is none, so this only fails if a route forgot to ask for one.
    func requireCaller() throws(APIError) -> Caller {
        guard let caller else { throw APIError.unauthenticated() }
        return caller
    }
}

