import HTTP
import Locking
import Logging
import Postgres

/// Wires the routes to their services over one connection pool and runs the HTTP server.
public final class Application: Sendable {
    public let configuration: Configuration
    public let server: Server
    public let pool: ConnectionPool
    /// The one clock every time the server keeps follows (`ServerClock`).
    public let clock: ServerClock
    /// Each `OIDC_PROVIDERS` provider's signing keys, by name, fetched until `stop`.
    let providerKeys: [String: ProviderKeys]
    /// Measures the replicas reads may go to (`DATABASE_REPLICA_URLS`); nil without any.
    let replicaMonitor: ReplicaMonitor?
    /// This instance's live change feed, running until `stop`.
    let feed: ChangeFeed
    /// The retention of changes and the upkeep of everything else, each a round of a
    /// recurring job (`changes.prune`, `upkeep.prune`) that the job runner runs.
    let changePruner: ChangePruner
    let upkeepPruner: UpkeepPruner
    /// Runs the background work of the job queue on this instance: mail (with `SMTP_URL`),
    /// push (with `PUSH_WEBHOOK_URL`), stored images to delete, new posts' feed fan-out, large
    /// accounts' follows once deleted, and the pruners' rounds.
    let jobs: JobRunner
    /// Measures images stored before posts had their size (migration 0009), once.
    let measurement: ImageMeasurement
    /// Trust mode: follows the clock and faults every instance shares (nil in token mode).
    let devState: DevState?
    /// Trust mode's snapshots (nil in token mode, which never reads one).
    let snapshots: DevSnapshots?
    /// The routes the server answers (which depend on the configuration: dev routes).
    let router: Router
    /// `BLOCKED_WORDS_FILE`'s filter, which `reload` reads again.
    public let blockedWords: BlockedWords

    /// Starts serving at once (migrations are the caller's business, see `Migrations`).
    /// `accessLog` defaults to lines on standard output in the configured format.
    /// `clock`: what the server schedules by (tests advance it rather than wait).
    public init(configuration: Configuration, logger: Logger, accessLog: (any AccessLog)? = nil, clock: ServerClock = ServerClock(),
                adjustServer: (inout ServerConfiguration) -> Void = { _ in }) throws {
        try configuration.validate()
        guard let databaseURL = configuration.databaseURL else { throw Configuration.Invalid.missingDatabaseURL }
        self.configuration = configuration
        self.clock = clock
        do {
            blockedWords = try BlockedWords(path: configuration.blockedWordsFile, logger: logger)
        } catch {
            throw Configuration.Invalid(description: "\(error)")
        }
        (pool, replicaMonitor) = DatabaseSessions.primary(conninfo: databaseURL, size: configuration.databasePoolSize,
                                                          topology: configuration.database, logger: logger)

        let storageMetrics = StorageMetrics(logger: logger)
        let store = try StorageSettings.makeStore(configuration.storage, uploadDirectory: configuration.uploadDirectory,
                                                  metrics: storageMetrics)
        try Self.check(store, configuration.storage, logger: logger)
        let feedEffects = FeedEffects(fanOutLimit: configuration.feedFanOutLimit)
        // Half the pool may run batches of one kind at once (`WriteCoalescer`), the rest stays
        // for everything else: measured on 2 cores, pool 4, like mix, 1 and 2 alike (5,280 and
        // 5,818 req/s in one run each).
        let writeBatchesRunning = max(1, configuration.databasePoolSize / 2)
        changePruner = ChangePruner(pool: pool, retention: configuration.changesRetention, clock: clock)
        upkeepPruner = UpkeepPruner(pool: pool, tokenLifetimeSeconds: configuration.tokenLifetime.components.seconds,
                                    notificationsRetentionSeconds: configuration.notificationsRetention.components.seconds,
                                    pushTokenRetentionSeconds: configuration.pushTokenRetention.components.seconds, clock: clock)
        var workers = [StorageDeletion.worker(store: store, metrics: storageMetrics), FeedFanOut.worker,
                       // (Its effects queue no job, so they need not wake this runner.)
                       AccountPurge.worker(effects: EventEffects(jobs: .none, feed: feedEffects, clock: clock)),
                       changePruner.worker, upkeepPruner.worker]
        // ActivityPub (API.md "Federation"): its routes, its jobs, remote accounts.
        let federation: Federation?
        if let settings = configuration.federation {
            federation = Federation(settings: settings, pool: pool, clock: clock)
        } else {
            federation = nil
        }
        workers += federation?.workers ?? []
        if let mail = configuration.mail {
            workers.append(MailDelivery.worker(settings: mail, erasesFinished: configuration.authMode == .token))
            logger.info("mailer started", metadata: ["smtp": "\(mail)"])
        } else if configuration.authMode == .token {
            logger.warning("SMTP_URL is not set: sign-in codes will not be delivered (they wait in the outbox table for an external mailer; see README \"Sending mail\")")
        }
        let directPush = try DirectPush(settings: configuration.pushProviders)
        if configuration.push != nil || directPush != nil {
            workers.append(PushDelivery.worker(settings: configuration.push, direct: directPush?.platforms ?? []))
        }
        if let push = configuration.push {
            logger.info("push sender started", metadata: ["url": "\(push)"])
        }
        if let directPush {
            workers.append(directPush.worker)
            logger.info("direct push started", metadata: ["services": "\(directPush.platforms.map(\.rawValue).joined(separator: ", "))"])
        }
        jobs = JobRunner(workers: workers, conninfo: databaseURL, pooler: configuration.database.pooler, clock: clock,
                         logger: logger)
        let scheduler = jobs.scheduler

        let accounts = Accounts(pool: pool, blockedWords: blockedWords, clock: clock)
        let tokens = Tokens(pool: pool, lifetimeSeconds: configuration.tokenLifetime.components.seconds, clock: clock)
        let outbox = Outbox(pool: pool, jobs: scheduler, clock: clock)
        let auth = AuthService(pool: pool, accounts: accounts, tokens: tokens, outbox: outbox,
                               logsCodes: configuration.logsLoginCodes, logger: logger)
        let identity = Identity(tokens: tokens, accounts: accounts, trustsEmails: configuration.authMode == .trust)
        providerKeys = Dictionary(uniqueKeysWithValues: configuration.oidcProviders.map {
            ($0.name, ProviderKeys(provider: $0, logger: logger))
        })
        let images = try ImageStore(directory: configuration.uploadDirectory, store: store, jobs: scheduler, pool: pool)
        // What every write's events cause, recorded in the write's own statement.
        var effects = EventEffects(jobs: scheduler, feed: feedEffects, clock: clock)
        effects.federates = federation != nil
        let profiles = ProfileService(pool: pool, effects: effects, images: images)
        let posts = PostService(pool: pool, effects: effects, images: images)
        let comments = CommentService(pool: pool, effects: effects, coalescer: WriteCoalescer(maxRunning: writeBatchesRunning))
        measurement = ImageMeasurement(pool: pool, images: images, logger: logger)

        let nudge = ChangeNudge()
        let limiter = configuration.rateLimitPerIP > 0 ? RateLimiter(perMinute: configuration.rateLimitPerIP, clock: clock) : nil
        let localOriginsOnly = configuration.authMode == .trust && !configuration.trustAnyHost
        let reads = ReadYourWrites(pool: pool)
        // Trust mode's clock and faults, shared by every instance on the database.
        let faults = configuration.authMode == .trust ? DevFaults(pool: pool, clock: clock) : nil
        var routes = RouteTable(pipeline: Pipeline(identity: identity, changes: nudge, reads: reads,
                                                   limiter: limiter, localOriginsOnly: localOriginsOnly, faults: faults))
        let mailConfigured = configuration.mail != nil
        // What /api/health and the console's overview say of each way of pushing.
        let webhookConfigured = configuration.push != nil
        let pushStates: @Sendable () -> [(String, String)] = { [jobs] in
            let webhook = !webhookConfigured ? "not_configured" : jobs.statistics.counters(of: .push).lastTryFailed ? "failing" : "ok"
            return [("webhook", webhook)] + PushTokenInput.Platform.allCases.map { platform in
                guard let directPush, directPush.platforms.contains(platform) else { return (platform.rawValue, "not_configured") }
                return (platform.rawValue, directPush.metrics.snapshot.failing.contains(platform) ? "failing" : "ok")
            }
        }
        // What /api/health and the console's overview say of mail.
        let mailState: @Sendable () -> HealthRoutes.MailState = { [jobs] in
            guard mailConfigured else { return .notConfigured }
            return jobs.statistics.counters(of: .mail).lastTryFailed ? .failing : .ok
        }
        HealthRoutes.register(on: &routes, pool: pool, mail: mailState, storageFailing: { storageMetrics.isFailing }, push: pushStates)
        OpenAPIRoutes.register(on: &routes)
        InstanceRoutes.register(on: &routes, configuration: configuration, webPushPublicKey: directPush?.webPushPublicKey)
        AuthRoutes.register(on: &routes, auth: auth, profiles: profiles)
        OIDCRoutes.register(on: &routes, keys: providerKeys,
                            signIn: ProviderSignIn(pool: pool, accounts: accounts, tokens: tokens),
                            identities: Identities(pool: pool, providers: configuration.oidcProviders), clock: clock)
        let resolveRemote: (@Sendable (String) throws -> Int64)? = federation.map { federation in
            { @Sendable acct in try federation.resolveRemote(acct) }
        }
        ProfileRoutes.register(on: &routes, profiles: profiles, images: images, blockedWords: blockedWords, remote: resolveRemote)
        PostRoutes.register(on: &routes, posts: posts, uploadDirectory: configuration.uploadDirectory,
                            blockedWords: blockedWords, clock: clock)
        let tags = TagService(pool: pool, clock: clock)
        SearchRoutes.register(on: &routes, search: SearchService(pool: pool), tags: tags)
        UploadRoutes.register(on: &routes, images: images)
        let likes = LikeService(pool: pool, effects: effects, coalescer: WriteCoalescer(maxRunning: writeBatchesRunning))
        LikeRoutes.register(on: &routes, likes: likes)
        CommentRoutes.register(on: &routes, comments: comments, blockedWords: blockedWords, clock: clock)
        CommentLikeRoutes.register(on: &routes, likes: CommentLikeService(pool: pool, effects: effects))
        RelationRoutes.register(on: &routes, relations: RelationService(pool: pool, effects: effects))
        let followCoalescers = FollowService.Coalescers(maxRunning: writeBatchesRunning)
        var follows = FollowService(pool: pool, effects: effects, coalescers: followCoalescers)
        if federation != nil { follows.remote = RemoteFollows(pool: pool, effects: effects) }
        FollowRoutes.register(on: &routes, follows: follows, feed: FeedService(pool: pool))
        let consoleAssets = Self.consoleAssets(in: configuration.consoleDirectory, logger: logger)
        let moderation = ModerationService(pool: pool, posts: posts, comments: comments, clock: clock)
        ModerationRoutes.register(on: &routes, reports: ReportService(pool: pool, clock: clock), moderation: moderation)
        // Whether or not federation is on: an admin may block domains before turning it on.
        DomainBlockRoutes.register(on: &routes, blocks: DomainBlocks(pool: pool, clock: clock), moderation: moderation)
        let overview = ConsoleOverview(pool: pool, clock: clock, health: {
            let push = pushStates().filter { $0.1 != "not_configured" }
            let summary = push.isEmpty ? "not_configured" : push.contains { $0.1 == "failing" } ? "failing" : "ok"
            return [("mail", mailState().rawValue), ("storage", storageMetrics.isFailing ? "failing" : "ok"), ("push", summary)]
        })
        let sessions = Sessions(pool: pool, lifetimeSeconds: configuration.tokenLifetime.components.seconds, clock: clock)
        ConsoleAPIRoutes.register(on: &routes, moderation: moderation, overview: overview,
                                  lookup: UserLookup(pool: pool, sessions: sessions), record: UserRecord(pool: pool, sessions: sessions))
        ConsoleRoutes.register(on: &routes, assets: consoleAssets)
        PushTokenRoutes.register(on: &routes, tokens: PushTokens(pool: pool, clock: clock), webPush: directPush)
        AccountRoutes.register(on: &routes, sessions: sessions, export: AccountExport(pool: pool, sessions: sessions),
                               deletion: AccountDeletion(pool: pool, effects: effects, images: images, clock: clock))
        // LISTEN holds its session: never through a transaction-mode pooler.
        feed = ChangeFeed(conninfo: configuration.database.direct(primary: databaseURL), logger: logger, nudge: nudge, clock: clock, keepAliveInterval: configuration.eventsKeepAlive)
        // One quota of streams per address, change and notification streams together.
        let streams = configuration.maxStreamsPerIP > 0 ? StreamQuota(perClient: configuration.maxStreamsPerIP) : nil
        ChangeRoutes.register(on: &routes, reader: ChangeReader(pool: pool), feed: feed, streams: streams, reads: reads)
        NotificationRoutes.register(on: &routes, notifications: NotificationService(pool: pool), reader: ChangeReader(pool: pool),
                                    feed: feed, streams: streams)
        let requests = RequestMetrics(forwardingTo: accessLog ?? LineAccessLog(format: configuration.logFormat))
        // The server is made from the routes, and /metrics reads its connection count.
        let madeServer = ParkingLock<Server?>(nil)
        MetricsRoutes.register(on: &routes, sources: MetricsRoutes.Sources(
            requests: requests, pool: pool, feed: feed, jobs: jobs, outbox: outbox,
            images: images.counters, storage: storageMetrics, upkeep: upkeepPruner,
            push: MetricsRoutes.PushSources(webhook: configuration.push != nil, direct: directPush),
            federation: federation?.metrics,
            writeBatches: [("like", { likes.coalescer.counts }), ("comment", { comments.coalescer.counts }),
                           ("follow", { followCoalescers.follows.counts }), ("unfollow", { followCoalescers.unfollows.counts })],
            openConnections: { madeServer.withLock { $0?.openConnections ?? 0 } }))
        if let faults {
            DevRoutes.register(on: &routes, outbox: outbox, reset: DevReset(pool: pool, images: images),
                               seed: DemoSeed(pool: pool, clock: clock), clock: DevClock(pool: pool, clock: clock), faults: faults)
            // A restored snapshot, here or on another instance: nothing kept of the rows before.
            let restores = RestoreObservers()
            restores.add { [feed] in
                identity.remembered.removeAll()
                tokens.relations.removeAll()
                accounts.relations.removeAll()
                tags.forget()
                federation?.keys.forget()
                feed.endAllStreams()
            }
            let saved = DevSnapshots(pool: pool, clock: clock, images: images, restores: restores)
            DevSnapshotRoutes.register(on: &routes, snapshots: saved)
            snapshots = saved
            devState = DevState(conninfo: configuration.database.direct(primary: databaseURL), clock: clock, faults: faults,
                                restores: restores, logger: logger)
        } else {
            devState = nil
            snapshots = nil
        }
        // A quarter of the workers apply inbox requests, as many more wait: the API keeps half.
        federation?.register(on: &routes, pool: pool, clock: clock,
                             services: Federation.Services(follows: follows, likes: likes, comments: comments, posts: posts,
                                                           deletion: AccountDeletion(pool: pool, effects: effects, images: images, clock: clock)),
                             inboxConcurrency: max(1, configuration.databasePoolSize / 4))
        router = routes.router

        var http = ServerConfiguration(host: configuration.host, port: configuration.port)
        // One worker per pooled connection: no worker ever parks on the pool (measured 25%
        // faster on /api/health than four spare workers), and the wait for a worker is
        // bounded by maxQueueWait instead (503 with Retry-After), as the pool's was.
        http.workerThreads = configuration.databasePoolSize
        // Requests that wait for a batch hold no connection: the more of them wait, the larger
        // the batches (like mix, pool 4, 2 cores: 2,901 req/s with 16 threads, 5,343 with 32,
        // 5,818 with 64; one after another, 2,342).
        http.coalescingWorkerThreads = max(64, 4 * configuration.databasePoolSize)
        // Uploads and first requests of a size: the image pipeline's threads.
        http.heavyWorkerThreads = configuration.imageConcurrency
        http.maxConnections = configuration.maxConnections
        http.maxConnectionsPerIP = configuration.maxConnectionsPerIP
        http.trustedProxies = configuration.trustedProxies
        http.maxRequestsPerConnection = configuration.maxRequestsPerConnection
        http.maxBodyMemory = configuration.maxBodyMemory
        http.poller = configuration.eventLoop
        http.errorRenderer = ErrorEnvelope.renderer
        adjustServer(&http)
        server = try Server(configuration: http, router: router, logger: logger, accessLog: requests)
        madeServer.withLock { [server] in $0 = server }
        DatabaseSessions.checkPooledSessions(pool, logger: logger)
        replicaMonitor?.start()
        for store in providerKeys.values { store.start() }
        // Before the jobs: they run on the shared clock.
        devState?.start()
        feed.start()
        jobs.start()
        measurement.start()
    }

    /// A bucket is asked once at start: refused credentials or a missing bucket stop the
    /// start with the store's words (loudly, not as 503s later); a store that does not
    /// answer is an outage, which the server rides out (`"storage":"failing"`).
    private static func check(_ store: any ObjectStore, _ settings: StorageSettings?, logger: Logger) throws {
        guard let settings, settings.location.isS3 else { return }
        do {
            try store.probe()
            logger.info("storing images in the object store", metadata: ["store": "\(settings)"])
        } catch .refused(let reason) {
            throw Configuration.Invalid(description: "STORAGE_URL: the object store refused us (check the bucket and "
                + "S3_ACCESS_KEY_ID/S3_SECRET_ACCESS_KEY): \(reason)")
        } catch {
            logger.warning("the object store does not answer; image uploads and reads answer 503 until it does",
                           metadata: ["store": "\(settings)", "error": "\(error)"])
        }
    }

    /// Reads again what may change while serving (SIGHUP): the blocked words. A failure
    /// keeps what is in force and logs a warning.
    public func reload() {
        blockedWords.reload()
    }

    /// `posts-server dev --restore NAME`: the data as the snapshot holds it. Trust mode only.
    public func restoreSnapshot(_ name: String) throws {
        guard let snapshots else {
            throw Configuration.Invalid(description: "--restore: snapshots exist only in trust mode (AUTH_MODE=trust)")
        }
        do {
            try snapshots.restore(DevSnapshots.validated(name))
        } catch let error as APIError {
            throw Configuration.Invalid(description: "--restore \(name): \(error.message)")
        }
    }

    /// Finishes the requests in flight (streams end at once), stops the feed and the job
    /// runner, then closes the pool. The provider key stores stop first: a sign-in
    /// waiting for keys answers at once rather than holding up the stop.
    public func stop() {
        providerKeys.values.forEach { $0.stop() }
        server.stop()
        feed.stop()
        jobs.stop()
        devState?.stop()
        measurement.stop()
        replicaMonitor?.stop()
        pool.replicas?.close()
        pool.close()
    }

    /// The console's files, or nil (logged) when they are not installed: `/console` then
    /// says so, and the API is unaffected.
    private static func consoleAssets(in explicit: String?, logger: Logger) -> ConsoleAssets? {
        guard let directory = ConsoleAssets.locate(explicit: explicit) else {
            logger.warning("no console folder found: /console answers 503 (set CONSOLE_DIR)")
            return nil
        }
        do {
            return try ConsoleAssets(directory: directory)
        } catch {
            logger.warning("the console's files could not be read: /console answers 503", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
