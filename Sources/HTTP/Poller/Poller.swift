/// What an event loop needs from the operating system's readiness API, and nothing more:
/// epoll on Linux (`EpollPoller`), Dispatch sources on macOS and wherever else
/// (`DispatchPoller`); `PollerKind` chooses. Connections, streams and the server speak only
/// to this, never to epoll, Dispatch or their descriptors.
///
/// Every connection is watched one-shot: after it reports an event it stays silent until it
/// is re-armed, so exactly one thread acts on a connection at a time (see `EventLoop`).
/// Threads: `poll` runs on the loop's own thread only; `add`, `rearm`, `remove` and `wake`
/// are called from workers too (a worker re-arms the connection it hands back), so they
/// must be safe from any thread.
protocol Poller: AnyObject, Sendable {
    /// Watches a listening socket for connections to accept, shared fairly between loops.
    func addListener(_ fd: Int32, token: UInt64) throws
    func removeListener(_ fd: Int32)

    /// Starts watching a connection (one-shot) for the given interest.
    func add(_ fd: Int32, token: UInt64, interest: PollInterest) throws
    /// Watches it again after it reported an event (or changes what it waits for). False if
    /// the descriptor is no longer registered.
    @discardableResult
    func rearm(_ fd: Int32, token: UInt64, interest: PollInterest) -> Bool
    func remove(_ fd: Int32)

    /// Makes a `poll` that is waiting (or the next one) return at once. Any thread may call it.
    func wake()

    /// Waits up to `timeoutMilliseconds` and reports each ready descriptor. Returns whether a
    /// `wake()` arrived. Only the loop's own thread calls it.
    func poll(timeoutMilliseconds: Int32, _ report: (PollEvent) -> Void) -> Bool
}

struct PollInterest: OptionSet, Sendable {
    let rawValue: UInt8
    static let readable = PollInterest(rawValue: 1)
    static let writable = PollInterest(rawValue: 2)
}

struct PollEvent: Sendable {
    let token: UInt64
    let readable: Bool
    let writable: Bool
    /// The peer hung up or the socket failed; a read will tell which.
    let hangUp: Bool
}
