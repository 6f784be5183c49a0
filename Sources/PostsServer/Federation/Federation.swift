import Postgres

/// API.md "Federation: the fediverse (ActivityPub)", wired in one place: what other
/// servers read (discovery, actors, notes, collections), the inboxes, the background work
/// that sends our activities (`federation.publish`, `federation.deliver`), and remote
/// accounts for the API. Made only with `FEDERATION=on`.
struct Federation: Sendable {
    let settings: FederationSettings
    let urls: FederationURLs
    let keys: ActorKeys
    let actors: ActorDocuments
    let notes: NoteDocuments
    let remoteActors: RemoteActors
    let metrics = FederationMetrics()
    /// Lookups of `@user@domain` wait on other servers: a few at once, as the inbox's share.
    private let lookups = InboxGate(limit: 2)

    init(settings: FederationSettings, pool: ConnectionPool, clock: ServerClock) {
        self.settings = settings
        urls = FederationURLs(settings)
        keys = ActorKeys(pool: pool, clock: clock)
        actors = ActorDocuments(pool: pool, keys: keys, urls: urls)
        notes = NoteDocuments(pool: pool, urls: urls)
        remoteActors = RemoteActors(pool: pool, clients: FederationClients(settings: settings), keys: keys, urls: urls,
                                    settings: settings, clock: clock)
    }

    /// The job kinds it runs.
    var workers: [JobWorker] {
        [FederationPublish.worker(urls: urls, notes: notes),
         FederationDelivery.worker(settings: settings, keys: keys, urls: urls, metrics: metrics)]
    }

    /// The services an inbox applies activities with (a remote actor acts through them as
    /// anyone does).
    struct Services: Sendable {
        let follows: FollowService
        let likes: LikeService
        let comments: CommentService
        let posts: PostService
        let deletion: AccountDeletion
    }

    /// `inboxConcurrency`: inbox requests applied at once (`InboxGate`).
    func register(on routes: inout RouteTable, pool: ConnectionPool, clock: ServerClock, services: Services,
                  inboxConcurrency: Int) {
        DiscoveryRoutes.register(on: &routes, actors: actors, settings: settings, pool: pool)
        ActorRoutes.register(on: &routes, actors: actors, collections: ActorCollections(pool: pool, urls: urls),
                             notes: notes, settings: settings)
        let activities = InboxActivities(pool: pool, actors: remoteActors, urls: urls, clock: clock, follows: services.follows,
                                         likes: services.likes, comments: services.comments, posts: services.posts,
                                         deletion: services.deletion)
        InboxRoutes.register(on: &routes, inbox: InboxRoutes.Inbox(
            verifier: InboxVerifier(actors: remoteActors), activities: activities, gate: InboxGate(limit: inboxConcurrency),
            metrics: metrics, pool: pool, clock: clock))
    }

    /// `GET /api/profiles/@user@domain`: the account's user id, resolved through WebFinger
    /// when unknown. 404 for none (or a blocked domain), 503 while its server is unreachable,
    /// 429 past two lookups at once (each may wait seconds on another server).
    func resolveRemote(_ acct: String) throws -> Int64 {
        do {
            guard let user = try lookups.run({ try remoteActors.resolve(acct: acct).userID }) else {
                throw APIError(.tooManyRequests, "too many lookups of other servers' accounts at once; try again shortly", retryAfter: 2)
            }
            return user
        } catch RemoteActors.Failure.unreachable(let why) {
            throw APIError(.unavailable, "the account's server does not answer: \(why)", retryAfter: 30)
        } catch let failure as RemoteActors.Failure {
            throw APIError.notFound("no such account: \(failure)")
        }
    }
}
