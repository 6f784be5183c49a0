import Postgres

/// A service whose database work can be one request's: the same service, with its pool
/// lending connections for that request's `DatabaseSession` (its read floor, its caller's
/// proof as the precondition of its first statement on the primary). Its `pool` is a `var`
/// only so that `serving(_:)` can give a copy another one.
protocol RequestBound: Sendable {
    var pool: ConnectionPool { get set }
    /// This service doing the database work of the request `session` belongs to.
    func serving(_ session: DatabaseSession) -> Self
}

extension RequestBound {
    func serving(_ session: DatabaseSession) -> Self {
        var bound = self
        bound.pool = pool.serving(session)
        return bound
    }
}

/// A service as a route file holds it: usable only for a request, so a route cannot do
/// database work outside its request's session by forgetting to pass it along.
///
///     let posts = PerRequest(posts)
///     routes.get("/api/posts/:id") { _, context in … posts(context).post(id, caller: context.caller) … }
///
/// How the session reaches the statements is plain: the service the call returns holds a
/// pool made for that session (`ConnectionPool.serving(_:)`), and every connection that pool
/// lends carries it. No thread keeps anything of it.
struct PerRequest<Service: RequestBound>: Sendable {
    private let service: Service

    init(_ service: Service) {
        self.service = service
    }

    func callAsFunction(_ context: AppContext) -> Service {
        service.serving(context.session)
    }
}
