/// One kind of background work and how the queue treats it: how many are claimed at once,
/// how long a claim is left to its runner, how long the kind keeps trying and how long it
/// waits between tries, and, for a recurring kind, how often it runs. Every kind is listed
/// here, so the retry rules and schedules of all background work can be read in one place.
struct JobKind: Sendable, Hashable, CustomStringConvertible {
    /// `jobs.kind`.
    let name: String
    /// Jobs one runner claims at once (one round trip to claim them, one to record them).
    let batch: Int
    /// How long a claim is left to its runner before another instance may take the job: a
    /// batch's worst case with room to spare, so only a runner that died gives jobs back.
    let leaseSeconds: Int
    /// How long after it was queued a job is still tried: a failure past it kills the job,
    /// and a job never tried within it dies untried. nil: tried until it succeeds.
    let windowSeconds: Int?
    /// The wait after the first failed try; each further failure doubles it, up to
    /// `maxBackoffSeconds`.
    let firstBackoffSeconds: Int
    let maxBackoffSeconds: Int
    /// Batches of this kind run at once on one instance (one handler each).
    var concurrency = 1
    /// A recurring kind's period: its one job (migration 0024) is due again this long after
    /// each run that succeeded, rather than deleted. nil: a job runs once, queued by a write.
    var everySeconds: Int?

    /// Whether the kind is recurring: every runner of it keeps its one job queued.
    var recurs: Bool { everySeconds != nil }

    var description: String { name }

    /// The wait after the `attempt`th try (1 for the first) failed.
    func backoffSeconds(afterAttempt attempt: Int) -> Int {
        let exponent = min(max(attempt - 1, 0), 20)
        return min(firstBackoffSeconds << exponent, maxBackoffSeconds)
    }

    static func == (left: JobKind, right: JobKind) -> Bool { left.name == right.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

extension JobKind {
    /// Every kind there is (whether or not this instance runs it).
    static let all: [JobKind] = [.mail, .push, .pushSend, .storageDeletion, .feedFanOut, .accountPurge, .changesPrune, .upkeepPrune,
                                 .federationPublish, .federationDeliver]

    /// API.md "Sign-in mail": a message is retried with backoff (1 s, 2 s, 4 s … at most
    /// 5 min) until it is 15 minutes old, past a code's life. Few at once, and a lease
    /// longer than a batch's worst case (four messages of 30 s), so a slow relay cannot
    /// outlast it.
    static let mail = JobKind(name: "mail.send", batch: 4, leaseSeconds: 180, windowSeconds: 15 * 60,
                              firstBackoffSeconds: 1, maxBackoffSeconds: 300)

    /// API.md "Push": a delivery is retried with the same backoff for an hour. A batch
    /// queues its notifications' direct pushes in one statement, then posts the webhook's
    /// for at most a minute (`PushDelivery.postingBudget`), well within its lease.
    static let push = JobKind(name: "push.deliver", batch: 64, leaseSeconds: 120, windowSeconds: 60 * 60,
                              firstBackoffSeconds: 1, maxBackoffSeconds: 300)

    /// API.md "Push to every device": one notification to one device through APNs, FCM or
    /// Web Push, queued by the notification's `push.deliver` job. Retried like the webhook
    /// (or when the service's `Retry-After` says) for an hour. A batch goes out at once,
    /// each push a stream of one connection per service; the lease covers a batch sent
    /// twice (new credentials) at its timeouts.
    static let pushSend = JobKind(name: "push.send", batch: 200, leaseSeconds: 120, windowSeconds: 60 * 60,
                                  firstBackoffSeconds: 1, maxBackoffSeconds: 300)

    /// API.md "Storage for many instances": an image a commit dropped is deleted from the
    /// store; an outage of the store delays the deletion, never loses it.
    static let storageDeletion = JobKind(name: "storage.delete", batch: 20, leaseSeconds: 120, windowSeconds: nil,
                                         firstBackoffSeconds: 2, maxBackoffSeconds: 300)

    /// API.md "Feeds at any scale": a new post copied into its author's followers' feeds,
    /// a batch of followers per transaction (`FeedFanOut`), its progress kept in the job so
    /// a runner that dies leaves the rest to the next. Tried until done: a post is never
    /// missing from a follower's feed for good. Its lease covers a job of `FEED_FANOUT_LIMIT`
    /// followers many times over.
    static let feedFanOut = JobKind(name: "feed.fanout", batch: 4, leaseSeconds: 300, windowSeconds: nil,
                                    firstBackoffSeconds: 1, maxBackoffSeconds: 60, concurrency: 2)

    /// The follows of a deleted account with more partners than one transaction locks, then
    /// the account (`AccountPurge`), a batch of partners a transaction. Tried until done: the
    /// account is hidden and signed out meanwhile, and must not stay half deleted.
    static let accountPurge = JobKind(name: "account.purge", batch: 1, leaseSeconds: 300, windowSeconds: nil,
                                      firstBackoffSeconds: 1, maxBackoffSeconds: 60)

    /// API.md "Changes": changes past `CHANGES_RETENTION` go "at least once a minute"
    /// (`ChangePruner`): a round every 30 s, on whichever instance claims it. A failed round
    /// is tried again 30 s later. The lease outlasts a round that removes a large backlog
    /// (5,000 changes a transaction); should it end all the same, a second round meanwhile
    /// finds the first holding the turn (an advisory lock) and leaves it the work.
    static let changesPrune = JobKind(name: "changes.prune", batch: 1, leaseSeconds: 600, windowSeconds: nil,
                                      firstBackoffSeconds: 30, maxBackoffSeconds: 30, everySeconds: 30)

    /// API.md "Sign-in mail" and "Feeds at any scale": expired codes, old mail, tokens, keys,
    /// notifications, push tokens, dead jobs and rows past the per-user caps go "at least
    /// hourly" (`UpkeepPruner`): a round every 30 s, its caps' sweep going on from where the
    /// last round stopped, whichever instance ran it (the place is kept in the job).
    static let upkeepPrune = JobKind(name: "upkeep.prune", batch: 1, leaseSeconds: 600, windowSeconds: nil,
                                     firstBackoffSeconds: 30, maxBackoffSeconds: 30, everySeconds: 30)

    /// API.md "Federation", Out: an activity of ours built once (`OutgoingActivity`) and
    /// queued for each inbox it goes to, in one transaction. Only the database is touched:
    /// tried until done, like a fan-out.
    static let federationPublish = JobKind(name: "federation.publish", batch: 16, leaseSeconds: 300, windowSeconds: nil,
                                           firstBackoffSeconds: 1, maxBackoffSeconds: 60)

    /// One activity to one inbox (a host's shared inbox once, not once per follower),
    /// signed; a batch goes out at once. Retried with backoff (30 s, doubling, at most 6 h)
    /// for 2 days; a host failing for 7 days is skipped until it answers again.
    static let federationDeliver = JobKind(name: "federation.deliver", batch: 100, leaseSeconds: 300,
                                           windowSeconds: 2 * 86_400, firstBackoffSeconds: 30, maxBackoffSeconds: 6 * 3600,
                                           concurrency: 2)
}
