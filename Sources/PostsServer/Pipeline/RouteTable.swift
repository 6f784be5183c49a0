import HTTP

/// The application's routes: each registered on the server's router behind the pipeline,
/// with what it needs of its caller. By default a route resolves a caller when the request
/// names one, so that dead credentials are refused (401) wherever they are sent; routes
/// that must not look (sign-in itself, ping, health) say `.open`. Route files register
/// here and hold no SQL.
struct RouteTable {
    typealias Handler = @Sendable (Request, AppContext) throws -> Response

    private(set) var router = Router()
    let pipeline: Pipeline

    init(pipeline: Pipeline) { self.pipeline = pipeline }

    /// `runsOnEventLoop`: only for constant answers that never block (see `Router`).
    /// `etag`: the answer carries a weak ETag and `If-None-Match` with it is 304 (API.md:
    /// single posts, profiles, list pages). An option of the route rather than a stage, so
    /// the list of answers that have one is read where the routes are declared, and answers
    /// that must not be cached (the export, health, metrics) never get one by accident.
    mutating func get(_ pattern: String, access: Access = .optional, runsOnEventLoop: Bool = false, etag: Bool = false,
                      _ handler: @escaping Handler) {
        let route: Handler
        if etag {
            route = { request, context in try handler(request, context).withWeakETag(for: request.head) }
        } else {
            route = handler
        }
        router.get(pattern, runsOnEventLoop: runsOnEventLoop, admission: pipeline.admission(access: access),
                   pipeline.wrap(access: access, route))
    }

    /// `coalesces`: the handler may wait for a batch of writes of its kind (`WriteCoalescer`):
    /// it runs on the coalescing lane (`Router.Route.coalesces`).
    mutating func post(_ pattern: String, access: Access = .optional, body: BodyPolicy = .collect(limit: Configuration.UploadLimits.api.maxJSONBytes),
                       coalesces: Bool = false, _ handler: @escaping Handler) {
        router.post(pattern, body: body, coalesces: coalesces, admission: pipeline.admission(access: access),
                    pipeline.wrap(access: access, handler))
    }

    mutating func patch(_ pattern: String, access: Access = .optional, body: BodyPolicy = .collect(limit: Configuration.UploadLimits.api.maxJSONBytes),
                        _ handler: @escaping Handler) {
        router.patch(pattern, body: body, admission: pipeline.admission(access: access), pipeline.wrap(access: access, handler))
    }

    mutating func put(_ pattern: String, access: Access = .optional, body: BodyPolicy = .none, coalesces: Bool = false,
                      _ handler: @escaping Handler) {
        router.put(pattern, body: body, coalesces: coalesces, admission: pipeline.admission(access: access),
                   pipeline.wrap(access: access, handler))
    }

    /// No body unless the route says so (`DELETE /api/me/push-tokens` names what it removes).
    mutating func delete(_ pattern: String, access: Access = .optional, body: BodyPolicy = .none, coalesces: Bool = false,
                         _ handler: @escaping Handler) {
        router.delete(pattern, body: body, coalesces: coalesces, admission: pipeline.admission(access: access),
                      pipeline.wrap(access: access, handler))
    }
}
