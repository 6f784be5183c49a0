import HTTP
import Logging
import Postgres

/// What a route handler receives beside the request: the server's context (request id,
/// parameters, logger), the caller the pipeline resolved, and what the request's database
/// work must honour (`session`), all of it values handed down, none kept by a thread.
struct AppContext: Sendable {
    let http: RequestContext
    let access: Access
    var caller: Caller?
    /// Set when `caller` was remembered: its proof, still to be checked (`CallerProofStage`).
    var callerProof: Precondition.Statement?
    /// The request's read floor (`ReadYourWritesStage`) and its caller's proof as the
    /// precondition of its first statement on the primary (`CallerProofStage`): the services
    /// a route calls do its database work through it (`RequestServices`).
    var session = DatabaseSession.none
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

