/// One kind of background work and how the queue treats it: how many are claimed at once,
/// how long a claim is left to its runner, how long the kind keeps trying and how long it
/// waits between tries. Every kind is listed here, so the retry rules of all background
/// work can be read in one place.
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
    static let all: [JobKind] = [.mail, .push, .storageDeletion, .feedFanOut, .accountPurge]

    /// API.md "Sign-in mail": a message is retried with backoff (1 s, 2 s, 4 s … at most
    /// 5 min) until it is 15 minutes old, past a code's life. Few at once, and a lease
    /// longer than a batch's worst case (four messages of 30 s), so a slow relay cannot
    /// outlast it.
    static let mail = JobKind(name: "mail.send", batch: 4, leaseSeconds: 180, windowSeconds: 15 * 60,
                              firstBackoffSeconds: 1, maxBackoffSeconds: 300)

    /// API.md "Push": a delivery is retried with the same backoff for an hour.
    static let push = JobKind(name: "push.deliver", batch: 8, leaseSeconds: 120, windowSeconds: 60 * 60,
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
}
